// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The component registry: the built-in types, types registered by the
 * application, and plugins loaded from shared objects.
 *
 * One process-wide table, filled with the built-ins on first use. Types
 * are only ever added, never removed or changed, so a pointer returned by
 * dfg_comp_find() stays valid for the life of the process, and a plugin,
 * once loaded, is never closed (its types point into it).
 *
 * A type of an older ABI version is a prefix of today's struct: nothing
 * past that version's fields is read from it (dfg_comp_param_decls()).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dfg/flow.h>

#include "comp_impl.h"
#include "param.h"

static const struct dfg_comp_type *const builtins[] = {
	&comp_read_lines, &comp_read_records, &comp_write_lines,
	&comp_write_records, &comp_generate, &comp_filter, &comp_map,
	&comp_split_words, &comp_partition, &comp_gather, &comp_merge,
	&comp_sort, &comp_sort_external, &comp_join, &comp_aggregate,
	&comp_count, &comp_exec,
};

/* The table; reg_lock protects all three and every change to them. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct dfg_comp_type **reg_types;
static unsigned int reg_nr, reg_cap;

static const struct dfg_comp_type *find_locked(const char *name)
{
	unsigned int i;

	for (i = 0; i < reg_nr; i++)
		if (!strcmp(reg_types[i]->name, name))
			return reg_types[i];
	return NULL;
}

/* Room for @n more types. */
static int reserve_locked(unsigned int n)
{
	const struct dfg_comp_type **types;
	unsigned int cap = reg_cap ? reg_cap : 32;

	while (cap - reg_nr < n)
		cap *= 2;
	if (cap == reg_cap)
		return 0;
	types = realloc(reg_types, cap * sizeof(*types));
	if (!types)
		return -ENOMEM;
	reg_types = types;
	reg_cap = cap;
	return 0;
}

/* The built-ins, once; they are valid, so only memory can fail. */
static int builtins_locked(void)
{
	unsigned int i, n = sizeof(builtins) / sizeof(builtins[0]);
	int ret;

	if (reg_nr)
		return 0;
	ret = reserve_locked(n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		reg_types[reg_nr++] = builtins[i];
	return 0;
}

/*
 * Whether instances of @t may share a process with other sets (a worker
 * pool of dfg run): the built-ins, which keep no state outside their
 * instance, but exec (it forks and waits for its children). A type of a
 * plugin or of the application may crash, or keep state of its own:
 * each set that has one runs in a process of its own.
 */
bool comp_type_poolable(const struct dfg_comp_type *t)
{
	unsigned int i;

	if (t == &comp_exec)
		return false;
	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (builtins[i] == t)
			return true;
	return false;
}

/*
 * Types whose checkpoints are the same thing, so that a substitution
 * between them carries the state: sort and sort_external both keep a
 * record store of what they have not sorted yet.
 */
bool comp_types_share_state(const char *a, const char *b)
{
	static const char *const family[] = { "sort", "sort_external" };
	bool in_a = false, in_b = false;
	unsigned int i;

	if (!strcmp(a, b))
		return true;
	for (i = 0; i < sizeof(family) / sizeof(family[0]); i++) {
		in_a |= !strcmp(a, family[i]);
		in_b |= !strcmp(b, family[i]);
	}
	return in_a && in_b;
}

/* Whether @t is a type the executor can drive; the reason in @err. */
static int type_check(const struct dfg_comp_type *t, char *err, size_t len)
{
	const char *why = NULL;
	char msg[160];
	int ret;

	if (t->abi < DFG_COMP_ABI_MIN || t->abi > DFG_COMP_ABI_VERSION) {
		snprintf(err, len,
			 "type '%s': ABI version %u, libdfg takes %u to %u",
			 t->name ? t->name : "?", t->abi, DFG_COMP_ABI_MIN,
			 DFG_COMP_ABI_VERSION);
		return -EPROTO;
	}
	if (!comp_name_ok(t->name))
		why = "bad name";
	else if (t->flags & ~DFG_COMP_FLAGS_ALL)
		why = "unknown flags";
	else if (t->min_in > t->max_in || t->min_out > t->max_out ||
		 t->max_in > DFG_COMP_MAX_PORTS ||
		 t->max_out > DFG_COMP_MAX_PORTS)
		why = "bad port ranges";
	else if (t->max_in && !t->compute)
		why = "has inputs but no compute";
	else if (!t->min_in && !t->run)
		why = "may have no input but has no run";
	else if (!t->checkpoint != !t->restore)
		why = "checkpoint without restore or restore without checkpoint";
	else if (dfg_comp_param_decls(t)) {
		ret = comp_param_decls_check(t->param_decls, msg, sizeof(msg));
		if (ret == -ENOMEM)
			return ret;
		why = ret ? msg : NULL;
	}
	if (!why)
		return 0;
	snprintf(err, len, "type '%s': %s",
		 comp_name_ok(t->name) ? t->name : "?", why);
	return -EINVAL;
}

/**
 * dfg_comp_param_decls() - the parameter declarations of a type
 *
 * Returns @t's table (ended by an entry with a NULL name), or NULL when
 * @t declares none: a type of ABI version 1, or one that left
 * @param_decls NULL.
 */
const struct dfg_param_decl *dfg_comp_param_decls(const struct dfg_comp_type *t)
{
	return t && t->abi >= 2 ? t->param_decls : NULL;
}

/* What the graph loader checks a component of type @type against. */
int comp_flow_typeinfo(const char *type, struct dfg_flow_typeinfo *info)
{
	const struct dfg_comp_type *t = dfg_comp_find(type);

	if (!t)
		return -ENOENT;
	memset(info, 0, sizeof(*info));
	info->foldable = t->flags & DFG_COMP_FOLDABLE;
	info->interior = t->max_in > 0;
	info->param_decls = dfg_comp_param_decls(t);
	info->params = info->param_decls ? NULL : t->params;
	info->ports_declared = true;
	info->min_in = t->min_in;
	info->max_in = t->max_in;
	info->min_out = t->min_out;
	info->max_out = t->max_out;
	return 0;
}

/*
 * Adds the NULL-terminated @types, all or none. Returns how many, or
 * -EINVAL/-EPROTO (a bad type), -EEXIST (a name is taken), -ENOMEM.
 */
static int add_types(const struct dfg_comp_type *const *types, char *err,
		     size_t errlen)
{
	unsigned int i, j, n = 0;
	int ret;

	for (n = 0; types[n]; n++) {
		ret = type_check(types[n], err, errlen);
		if (ret)
			return ret;
		for (j = 0; j < n; j++)
			if (!strcmp(types[j]->name, types[n]->name))
				goto dup;
	}
	pthread_mutex_lock(&reg_lock);
	ret = builtins_locked();
	for (i = 0; !ret && i < n; i++) {
		if (find_locked(types[i]->name)) {
			pthread_mutex_unlock(&reg_lock);
			n = i;
			goto dup;
		}
	}
	if (!ret)
		ret = reserve_locked(n);
	for (i = 0; !ret && i < n; i++)
		reg_types[reg_nr++] = types[i];
	pthread_mutex_unlock(&reg_lock);
	return ret ? ret : (int)n;
dup:
	snprintf(err, errlen, "type '%s' is already registered",
		 types[n]->name);
	return -EEXIST;
}

/**
 * dfg_comp_register() - add an application's component type
 *
 * Returns 0, or -EINVAL (bad type: name, ports, missing callbacks),
 * -EPROTO (other DFG_COMP_ABI_VERSION), -EEXIST, -ENOMEM.
 */
int dfg_comp_register(const struct dfg_comp_type *t)
{
	const struct dfg_comp_type *types[2] = { t, NULL };
	char msg[128];
	int saved = errno, ret;

	if (!t)
		return -EINVAL;
	ret = add_types(types, msg, sizeof(msg));
	errno = saved;
	return ret < 0 ? ret : 0;
}

/* The type called @name, or NULL. */
const struct dfg_comp_type *dfg_comp_find(const char *name)
{
	const struct dfg_comp_type *t = NULL;
	int saved = errno;

	if (!name)
		return NULL;
	pthread_mutex_lock(&reg_lock);
	if (!builtins_locked())
		t = find_locked(name);
	pthread_mutex_unlock(&reg_lock);
	errno = saved;
	return t;
}

/*
 * Fills @types with up to @max registered types, in registration order;
 * returns how many there are in all (may exceed @max), or -ENOMEM.
 */
int dfg_comp_list(const struct dfg_comp_type **types, unsigned int max)
{
	int saved = errno, ret;
	unsigned int i;

	if (max && !types)
		return -EINVAL;
	pthread_mutex_lock(&reg_lock);
	ret = builtins_locked();
	for (i = 0; !ret && i < max && i < reg_nr; i++)
		types[i] = reg_types[i];
	if (!ret)
		ret = reg_nr;
	pthread_mutex_unlock(&reg_lock);
	errno = saved;
	return ret;
}

/**
 * dfg_comp_load() - load a plugin and register its component types
 * @path:	shared object, as dlopen(3) takes it
 * @err:	out: why it failed (may be NULL)
 *
 * Returns the number of types registered, or -ENOENT (dlopen failed),
 * -ENOEXEC (no DFG_PLUGIN_ENTRY, or it returned NULL), -EPROTO (a type
 * of another ABI version), -EINVAL (a bad type), -EEXIST (a name is
 * taken), -ENOMEM. Nothing is registered on failure.
 */
int dfg_comp_load(const char *path, char *err, size_t errlen)
{
	const struct dfg_comp_type *const *types;
	dfg_plugin_entry_fn entry;
	int saved = errno, ret;
	char dummy[1];
	void *h;

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (!path)
		return -EINVAL;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "%s", dlerror());
		errno = saved;
		return -ENOENT;
	}
	*(void **)&entry = dlsym(h, DFG_PLUGIN_ENTRY);
	types = entry ? entry() : NULL;
	if (!types) {
		snprintf(err, errlen, "%s: %s", path,
			 entry ? DFG_PLUGIN_ENTRY "() returned no types" :
				 "no " DFG_PLUGIN_ENTRY "()");
		ret = -ENOEXEC;
	} else {
		ret = add_types(types, err, errlen);
	}
	if (ret <= 0)
		dlclose(h);
	errno = saved;
	return ret;
}
