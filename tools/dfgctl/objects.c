// SPDX-License-Identifier: GPL-2.0
/* dfgctl objects, chans: every object of every graph, one line each. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dfgctl.h"
#include "json.h"

/* Counters of graphs/<id>/chan<cid>/, in the order of <linux/dfg.h>. */
static const char *const chan_attrs[] = {
	"depth", "producers", "consumer", "messages", "bytes", "hwm",
	"full_stalls", "empty_stalls", "parks", "wakeups",
};

/* Attributes of graphs/<id>/arena<aid>/ and region<rid>/, in that order. */
static const char *const arena_attrs[] = { "size", "pages", "resident" };
static const char *const region_attrs[] = {
	"size", "pages", "writable", "users",
};

/*
 * Attributes of graphs/<id>/team<tid>/, and the keys they print under:
 * the team's name as "team", beside the graph's "name".
 */
static const char *const team_attrs[] = {
	"name", "size", "joined", "state", "dead_rank", "waits", "wakes",
	"pages",
};
static const char *const team_keys[] = {
	"team", "size", "joined", "state", "dead_rank", "waits", "wakes",
	"pages",
};

/* Kinds of object directory below graphs/<id>/. */
static const struct obj_kind {
	const char		*prefix;	/* directory "<prefix><id>" */
	const char *const	*attrs;		/* known counters, in order */
	size_t			nr_attrs;
	const char *const	*keys;		/* printed as; NULL: @attrs */
} obj_kinds[] = {
	{ "arena",	arena_attrs,	ARRAY_SIZE(arena_attrs),	NULL },
	{ "region",	region_attrs,	ARRAY_SIZE(region_attrs),	NULL },
	{ "chan",	chan_attrs,	ARRAY_SIZE(chan_attrs),		NULL },
	{ "team",	team_attrs,	ARRAY_SIZE(team_attrs),		team_keys },
};

static bool is_attr(const struct obj_kind *k, const char *name)
{
	size_t i;

	for (i = 0; i < k->nr_attrs; i++)
		if (!strcmp(name, k->attrs[i]))
			return true;
	return false;
}

/* One counter: " name=value", or a member of the open JSON object. */
static void put_attr(struct json *js, const char *name, const char *v)
{
	if (js)
		json_auto(js, name, v);
	else
		printf(" %s=%s", name, v);
}

/*
 * Rest of an object's line after "graph=<id> name=<name> ...": its known
 * counters, then any added by newer modules, alphabetically. A counter
 * that vanished (the object died meanwhile) prints as "?". With @js,
 * the same as the members of a "counters" object.
 */
static void print_obj_attrs(const char *gdir, const char *ent,
			    const struct obj_kind *k, struct json *js)
{
	char odir[PATH_MAX], v[256];
	struct dirent **ents;
	size_t i;
	int n;

	ctl_path_join(odir, sizeof(odir), gdir, ent);
	if (js)
		json_obj_begin(js, "counters");
	for (i = 0; i < k->nr_attrs; i++) {
		if (ctl_read_sysfs_line(odir, k->attrs[i], v, sizeof(v)))
			strcpy(v, "?");
		put_attr(js, k->keys ? k->keys[i] : k->attrs[i], v);
	}
	n = scandir(odir, &ents, ctl_not_hidden, alphasort);
	for (int j = 0; j < n; j++) {
		if (!is_attr(k, ents[j]->d_name) &&
		    !ctl_read_sysfs_line(odir, ents[j]->d_name, v, sizeof(v)))
			put_attr(js, ents[j]->d_name, v);
	}
	if (n >= 0)
		ctl_free_ents(ents, n);
	if (js)
		json_obj_end(js);
	else
		putchar('\n');
}

/* The kind of an entry "<prefix><digits>" of a graph directory, or NULL. */
static const struct obj_kind *obj_kind_of(const char *name)
{
	size_t i, n;
	const char *p;

	for (i = 0; i < ARRAY_SIZE(obj_kinds); i++) {
		n = strlen(obj_kinds[i].prefix);
		if (strncmp(name, obj_kinds[i].prefix, n) || !name[n])
			continue;
		for (p = name + n; *p >= '0' && *p <= '9'; p++)
			;
		if (!*p)
			return &obj_kinds[i];
	}
	return NULL;
}

static int obj_filter(const struct dirent *de)
{
	return obj_kind_of(de->d_name) != NULL;
}

static unsigned long obj_id(const char *name)
{
	return strtoul(name + strlen(obj_kind_of(name)->prefix), NULL, 10);
}

static int obj_sort(const struct dirent **a, const struct dirent **b)
{
	unsigned long x = obj_id((*a)->d_name), y = obj_id((*b)->d_name);

	return x < y ? -1 : x > y;
}

/*
 * Every object of every graph, in graph then id order, one line each:
 * "graph=<id> name=<name> kind=<k> id=<oid> <counter>=<value> ...", or,
 * with @only, just the objects of that kind as "... <k>=<oid> ...". With
 * --json, an array of {"graph","name","kind","id","counters":{...}}.
 */
static int list_objects(int argc, char **argv, const char *cmd,
			const struct obj_kind *only)
{
	char gdir[PATH_MAX], path[PATH_MAX], gname[128];
	struct dirent **graphs, **objs;
	struct json js;
	bool json;
	int i, j, ng, no, ret;

	ret = ctl_json_opts(argc, argv, cmd, &json);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (!ctl_path_join(gdir, sizeof(gdir), ctl_sysfs_dir(), "graphs"))
		return ctl_fail(ctl_sysfs_dir(), strerror(ENAMETOOLONG), false);
	ng = ctl_scan_numbered(gdir, "", &graphs);
	if (ng < 0)
		return ctl_fail(gdir, strerror(-ng), ng == -ENOENT);
	json_init(&js, stdout);
	if (json)
		json_arr_begin(&js, NULL);
	for (i = 0; i < ng; i++) {
		ctl_path_join(path, sizeof(path), gdir, graphs[i]->d_name);
		if (ctl_read_sysfs_line(path, "name", gname, sizeof(gname)))
			strcpy(gname, "?");
		no = scandir(path, &objs, obj_filter, obj_sort);
		if (no < 0)
			continue;	/* graph died meanwhile */
		for (j = 0; j < no; j++) {
			const struct obj_kind *k = obj_kind_of(objs[j]->d_name);
			unsigned long id = obj_id(objs[j]->d_name);

			if (only && k != only)
				continue;
			if (json) {
				json_obj_begin(&js, NULL);
				json_auto(&js, "graph", graphs[i]->d_name);
				json_str(&js, "name", gname);
				json_str(&js, "kind", k->prefix);
				json_u64(&js, "id", id);
				print_obj_attrs(path, objs[j]->d_name, k, &js);
				json_obj_end(&js);
				continue;
			}
			printf("graph=%s name=%s", graphs[i]->d_name, gname);
			if (only)
				printf(" %s=%lu", k->prefix, id);
			else
				printf(" kind=%s id=%lu", k->prefix, id);
			print_obj_attrs(path, objs[j]->d_name, k, NULL);
		}
		ctl_free_ents(objs, no);
	}
	ctl_free_ents(graphs, ng);
	if (json) {
		json_arr_end(&js);
		json_finish(&js);
	}
	return EXIT_OK;
}

int cmd_objects(int argc, char **argv)
{
	return list_objects(argc, argv, "objects", NULL);
}

int cmd_chans(int argc, char **argv)
{
	return list_objects(argc, argv, "chans", &obj_kinds[2]);
}
