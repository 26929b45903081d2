// SPDX-License-Identifier: GPL-2.0
/*
 * mem_short - the memory shortage of tools/bench/rules.sh's memory
 * scenario, in the test VM only: raises the kernel's free page reserve
 * (vm.min_free_kbytes) by KB in one write, holds it HOLD_S seconds or
 * until SIGTERM, SIGINT or SIGHUP, and puts it back in one write.
 *
 * The reserve is memory the kernel keeps free: user space cannot have it
 * without reclaim, and MemAvailable (si_mem_available(): free pages less
 * the zones' reserves, plus what reclaim could take) drops at once, by
 * more than KB: the high watermarks rise by about 1.25 x KB, and less of
 * the page cache counts as reclaimable past the low ones. A write
 * recomputes the watermarks and touches no page, so the shortage begins
 * and ends at a known moment. A hog that allocates and touches 512 MiB
 * took seconds under TCG (filling the kernel's huge page pool with them,
 * over a minute on a loaded host), seconds in which MemAvailable fell
 * past the rules' threshold at a moment nobody knew.
 *
 * Prints, CLOCK_MONOTONIC ns (the clock of rules_watch and of dfg's
 * DFG_REPLAN_LOG lines) and MemAvailable in kB:
 *
 *   ready T_BEGIN T_IN KB    the raising write began at T_BEGIN and was
 *                            over at T_IN; MemAvailable then
 *   gone T_BEGIN T_OUT KB    the same for the write putting it back
 *
 * and exits 0; 1 when the reserve could not be read or set, or when
 * MemFree would not stay 256 MiB over the raised reserve (the OOM killer
 * would come into the run); 2 on bad arguments.
 *
 *   mem_short KB HOLD_S
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char reserve_path[] = "/proc/sys/vm/min_free_kbytes";

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL +
	       (unsigned long long)ts.tv_nsec;
}

/* The field @key of /proc/meminfo ("MemAvailable:"), in kB, or -1. */
static long meminfo_kb(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "re");
	size_t len = strlen(key);
	char line[128];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len)) {
			kb = strtol(line + len, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

/* The reserve in kB, or -1. */
static long reserve_get(void)
{
	FILE *f = fopen(reserve_path, "re");
	long kb = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &kb) != 1)
		kb = -1;
	fclose(f);
	return kb;
}

/* Sets the reserve to @kb: 0, or -1 with errno. */
static int reserve_set(long kb)
{
	FILE *f = fopen(reserve_path, "we");

	if (!f)
		return -1;
	fprintf(f, "%ld\n", kb);
	/* the watermarks are recomputed in the write */
	return fclose(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
	long add = argc == 3 ? atol(argv[1]) : 0;
	double hold = argc == 3 ? atof(argv[2]) : -1;
	unsigned long long t0, t1, end;
	long before, free_kb;
	struct timespec left;
	sigset_t sigs;
	int sig = 0, r;

	if (add <= 0 || hold < 0) {
		fprintf(stderr, "usage: mem_short KB HOLD_S\n");
		return 2;
	}
	before = reserve_get();
	free_kb = meminfo_kb("MemFree:");
	if (before < 0 || free_kb < 0) {
		fprintf(stderr, "mem_short: cannot read %s or MemFree\n",
			reserve_path);
		return 1;
	}
	if (free_kb < before + add + 256 * 1024) {
		fprintf(stderr,
			"mem_short: MemFree %ld kB: a reserve of %ld kB leaves too little\n",
			free_kb, before + add);
		return 1;
	}
	/* a signal before the reserve is raised ends the hold at once, after */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);

	t0 = now_ns();
	r = reserve_set(before + add);
	t1 = now_ns();
	if (r) {
		fprintf(stderr, "mem_short: %s: %s\n", reserve_path,
			strerror(errno));
		reserve_set(before);
		return 1;
	}
	printf("ready %llu %llu %ld\n", t0, t1, meminfo_kb("MemAvailable:"));
	fflush(stdout);

	end = t1 + (unsigned long long)(hold * 1e9);
	do {
		unsigned long long t = now_ns();

		if (t >= end)
			break;
		left.tv_sec = (time_t)((end - t) / 1000000000ULL);
		left.tv_nsec = (long)((end - t) % 1000000000ULL);
		sig = sigtimedwait(&sigs, NULL, &left);
	} while (sig < 0 && errno == EINTR);

	t0 = now_ns();
	r = reserve_set(before);
	t1 = now_ns();
	printf("gone %llu %llu %ld\n", t0, t1, meminfo_kb("MemAvailable:"));
	if (r || reserve_get() != before) {
		fprintf(stderr, "mem_short: %s not set back to %ld\n",
			reserve_path, before);
		return 1;
	}
	return 0;
}
