"""Ways of reaching a device: SSH (``ssh``), this machine (``local``), and the
one quoting command builder every remote command line goes through (``command``)."""
