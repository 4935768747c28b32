/* A workload that times itself, for checking the agent's wall latency.
 *
 * Usage: timed_workload sleep|spin|work AMOUNT LOG
 *   sleep AMOUNT microseconds (nanosleep), spin for AMOUNT microseconds of
 *   the clock, or do AMOUNT units of arithmetic (a fixed amount of work, which
 *   takes longer when something else takes the CPU).
 * Appends "START END" to LOG: its own first and last readings of
 * CLOCK_REALTIME in microseconds (the clock of the shells' $EPOCHREALTIME),
 * so its loading and exit are outside the window it reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	long long start = now_us();
	long long amount, end;
	volatile unsigned long state = 1;
	FILE *log;

	if (argc != 4)
		return 2;
	amount = atoll(argv[2]);
	if (strcmp(argv[1], "spin") == 0) {
		while (now_us() - start < amount)
			;
	} else if (strcmp(argv[1], "work") == 0) {
		for (long long i = 0; i < amount; i++)
			state = state * 1103515245UL + 12345UL;
	} else {
		struct timespec length = {amount / 1000000, (amount % 1000000) * 1000};
		nanosleep(&length, NULL);
	}
	end = now_us();
	log = fopen(argv[3], "a");
	if (log == NULL)
		return 3;
	fprintf(log, "%lld %lld\n", start, end);
	return fclose(log) == 0 ? 0 : 3;
}
