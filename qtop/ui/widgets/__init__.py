"""Small reusable widgets: charts, a histogram, the replay timeline, a ratio bar."""
