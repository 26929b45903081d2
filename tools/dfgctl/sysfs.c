// SPDX-License-Identifier: GPL-2.0
/* dfgctl helpers: reading /sys/kernel/dfg. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dfgctl.h"

const char *ctl_sysfs_dir(void)
{
	const char *dir = getenv("DFG_SYSFS");

	return dir && *dir ? dir : DFG_SYSFS_DIR;
}

/* First line of @dir/@name, without the newline, into @line; 0 or -errno. */
int ctl_read_sysfs_line(const char *dir, const char *name, char *line,
			size_t size)
{
	char path[PATH_MAX];
	FILE *f;
	int err = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(line, size, f)) {
		if (ferror(f))
			err = errno ? -errno : -EIO;
		line[0] = '\0';
	}
	fclose(f);
	if (err)
		return err;
	line[strcspn(line, "\n")] = '\0';
	return 0;
}

/* @buf = "@a/@b"; false (and an empty @buf) if it does not fit. */
bool ctl_path_join(char *buf, size_t size, const char *a, const char *b)
{
	if (snprintf(buf, size, "%s/%s", a, b) < (int)size)
		return true;
	buf[0] = '\0';
	return false;
}

int ctl_not_hidden(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

/* Entries "<prefix><number>" of a directory, in numeric order. */
static const char *num_prefix;

static int num_filter(const struct dirent *de)
{
	size_t n = strlen(num_prefix);
	const char *p = de->d_name + n;

	if (strncmp(de->d_name, num_prefix, n) || !*p)
		return 0;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

static int num_sort(const struct dirent **a, const struct dirent **b)
{
	size_t n = strlen(num_prefix);
	unsigned long x = strtoul((*a)->d_name + n, NULL, 10);
	unsigned long y = strtoul((*b)->d_name + n, NULL, 10);

	return x < y ? -1 : x > y;
}

/* scandir() of @dir for "<prefix><n>" entries; count or -errno. */
int ctl_scan_numbered(const char *dir, const char *prefix,
		      struct dirent ***ents)
{
	int n;

	num_prefix = prefix;
	n = scandir(dir, ents, num_filter, num_sort);
	return n < 0 ? -errno : n;
}

void ctl_free_ents(struct dirent **ents, int n)
{
	while (n > 0)
		free(ents[--n]);
	free(ents);
}
