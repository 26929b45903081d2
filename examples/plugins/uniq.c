// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * An example dfg plugin: two component types in one shared object.
 *
 *   uniq	drops an element equal to the one before it (like uniq(1));
 *		with count=1 it emits "<n> <element>" per run instead.
 *		Keeps the last element as its state, and checkpoints it.
 *   rot13	rotates letters by 13 (stateless).
 *
 * Build: cc -shared -fPIC -o uniq.so uniq.c (the examples Makefile does).
 * Use:   dfg_comp_load("build/lib/dfg/plugins/uniq.so", err, sizeof(err)),
 *        then the types are found by name like the built-ins.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dfg/component.h>

/*
 * struct uniq - the current run of equal elements
 * @last, @len:	its element (owned), valid when @n > 0
 * @n:		its length so far
 * @count:	emit run lengths (at the end of each run)
 */
struct uniq {
	char		*last;
	size_t		len;
	unsigned long	n;
	int		count;
};

static int uniq_init(struct dfg_comp *c, void **state)
{
	struct uniq *u;
	long long count;
	int ret;

	ret = dfg_comp_param_long(c, "count", 0, 0, 1, &count);
	if (ret)
		return ret;
	u = calloc(1, sizeof(*u));
	if (!u)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	u->count = count;
	*state = u;
	return 0;
}

static void uniq_fini(struct dfg_comp *c)
{
	struct uniq *u = dfg_comp_state(c);

	free(u->last);
	free(u);
}

/* A run ended: with count=1, say how long it was. */
static int uniq_end_run(struct dfg_comp *c, struct uniq *u)
{
	struct dfg_elem e = { 0 };
	char *line;
	int n, ret;

	if (!u->count || !u->n)
		return 0;
	n = asprintf(&line, "%lu %.*s", u->n, (int)u->len, u->last);
	if (n < 0)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	e.data = line;
	e.len = n;
	ret = dfg_emit(c, 0, &e);
	free(line);
	return ret;
}

static int uniq_remember(struct dfg_comp *c, struct uniq *u, const void *p,
			 size_t len)
{
	char *copy = malloc(len ? len : 1);

	if (!copy)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	memcpy(copy, p, len);
	free(u->last);
	u->last = copy;
	u->len = len;
	return 0;
}

static int uniq_compute(struct dfg_comp *c, unsigned int port,
			const struct dfg_elem *e)
{
	struct uniq *u = dfg_comp_state(c);
	int ret;

	(void)port;
	if (u->n && e->len == u->len && !memcmp(e->data, u->last, e->len)) {
		u->n++;
		return 0;
	}
	ret = uniq_end_run(c, u);
	if (!ret)
		ret = uniq_remember(c, u, e->data, e->len);
	if (ret)
		return ret;
	u->n = 1;
	/* without count, the first of a run goes out as it came */
	return u->count ? 0 : dfg_emit(c, 0, e);
}

static int uniq_shutdown(struct dfg_comp *c)
{
	return uniq_end_run(c, dfg_comp_state(c));
}

static int uniq_checkpoint(struct dfg_comp *c, struct dfg_ckpt *w)
{
	struct uniq *u = dfg_comp_state(c);
	int ret;

	ret = dfg_ckpt_put_u64(w, u->n);
	if (!ret)
		ret = dfg_ckpt_put_bytes(w, u->last, u->n ? u->len : 0);
	return ret;
}

static int uniq_restore(struct dfg_comp *c, struct dfg_ckpt *r)
{
	struct uniq *u = dfg_comp_state(c);
	const void *p;
	size_t len;
	__u64 n;
	int ret;

	ret = dfg_ckpt_get_u64(r, &n);
	if (!ret)
		ret = dfg_ckpt_get_bytes(r, &p, &len);
	if (!ret && n)
		ret = uniq_remember(c, u, p, len);
	if (!ret)
		u->n = n;
	return ret;
}

/* What dfg plan checks a graph's "uniq" nodes against. */
static const struct dfg_param_decl uniq_decls[] = {
	{ .name = "count", .kind = DFG_PARAM_UINT, .min = 0, .max = 1,
	  .def = "0", .help = "1: prefix each element with its count" },
	{ NULL },
};

/* rot13 takes no parameters: an empty table says so. */
static const struct dfg_param_decl rot13_decls[] = { { NULL } };

static const struct dfg_comp_type uniq_type = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "uniq",
	.summary = "drop repeated adjacent elements (count=1: count them)",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = 1,
	.min_out = 1, .max_out = 1,
	.param_decls = uniq_decls,
	.init = uniq_init,
	.fini = uniq_fini,
	.compute = uniq_compute,
	.shutdown = uniq_shutdown,
	.checkpoint = uniq_checkpoint,
	.restore = uniq_restore,
};

static int rot13_compute(struct dfg_comp *c, unsigned int port,
			 const struct dfg_elem *e)
{
	const char *s = e->data;
	struct dfg_elem out = *e;
	char buf[256], *p = e->len <= sizeof(buf) ? buf : malloc(e->len);
	size_t i;
	int ret;

	(void)port;
	if (!p)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	for (i = 0; i < e->len; i++) {
		char ch = s[i];

		if (ch >= 'a' && ch <= 'z')
			ch = 'a' + (ch - 'a' + 13) % 26;
		else if (ch >= 'A' && ch <= 'Z')
			ch = 'A' + (ch - 'A' + 13) % 26;
		p[i] = ch;
	}
	out.data = p;
	ret = dfg_emit(c, 0, &out);
	if (p != buf)
		free(p);
	return ret;
}

static const struct dfg_comp_type rot13_type = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "rot13",
	.summary = "rotate ASCII letters by 13",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = 1,
	.min_out = 1, .max_out = 1,
	.compute = rot13_compute,
	.param_decls = rot13_decls,
};

static const struct dfg_comp_type *const types[] = {
	&uniq_type, &rot13_type, NULL,
};

/* The entry point dfg_comp_load() looks for (DFG_PLUGIN_ENTRY). */
const struct dfg_comp_type *const *dfg_plugin_types(void)
{
	return types;
}
