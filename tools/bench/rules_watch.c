// SPDX-License-Identifier: GPL-2.0
/*
 * rules_watch - the clock of tools/bench/rules.sh: while process PID
 * lives, prints every PERIOD_MS "t_ns size" of FILE (CLOCK_MONOTONIC, the
 * clock of dfg's DFG_REPLAN_LOG lines), so that the script can tell when
 * the output passed a given line (fixed-width lines) and what each phase
 * of a scenario ran at. One stat() per sample: it takes next to no CPU
 * from the run it watches (a shell loop forking tail would not).
 *
 *   rules_watch FILE PERIOD_MS PID
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL +
	       (unsigned long long)ts.tv_nsec;
}

/* Alive and not yet a zombie (the script reaps it only after). */
static int alive(pid_t pid)
{
	char path[64], buf[512], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

int main(int argc, char **argv)
{
	long long last = -1;
	struct timespec nap;
	struct stat st;
	long period;
	pid_t pid;

	if (argc != 4) {
		fprintf(stderr, "usage: rules_watch FILE PERIOD_MS PID\n");
		return 2;
	}
	period = atol(argv[2]);
	pid = (pid_t)atol(argv[3]);
	if (period <= 0 || pid <= 0) {
		fprintf(stderr, "rules_watch: bad PERIOD_MS or PID\n");
		return 2;
	}
	nap.tv_sec = period / 1000;
	nap.tv_nsec = (period % 1000) * 1000000L;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		int live = alive(pid);
		long long size = stat(argv[1], &st) ? 0 : (long long)st.st_size;

		/* every change, and the last sample */
		if (size != last || !live)
			printf("%llu %lld\n", now_ns(), size);
		last = size;
		if (!live)
			return 0;
		nanosleep(&nap, NULL);
	}
}
