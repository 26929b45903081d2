// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: the dataflow graph model. Turns what the DOT loader read (struct
 * fg_raw) into a validated struct dfg_flow: components with their type,
 * parameters, degree, phase, folding flags and ports; flows with their
 * kind; the topological order. Every problem becomes one error naming the
 * file, line, object and attribute; nothing is built unless there are none.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/dfg.h>

#include "flow_impl.h"
#include "../comp/comp_flow.h"

/* A repartitioning flow is a kernel channel with a ring per producer. */
_Static_assert(DFG_FLOW_MAX_FANIN <= DFG_CHAN_PRODUCERS_MAX,
	       "more upstream instances than a channel has producers");

/* Pool memory comes in chunks of at least this many bytes. */
#define FG_CHUNK	16384
/* Port numbers, for types that do not name their ports. */
#define FG_MAX_PORTS	256

struct fg_chunk {
	struct fg_chunk	*next;
	size_t		used, size;
	max_align_t	data[];
};

void *fg_alloc(struct fg_pool *p, size_t size)
{
	struct fg_chunk *c = p->head;
	size_t align = sizeof(max_align_t);
	void *ret;

	size = (size + align - 1) / align * align;
	if (!size)
		size = align;
	if (!c || c->size - c->used < size) {
		size_t csize = size > FG_CHUNK ? size : FG_CHUNK;

		c = malloc(sizeof(*c) + csize);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = csize;
		c->next = p->head;
		p->head = c;
	}
	ret = (char *)c->data + c->used;
	c->used += size;
	memset(ret, 0, size);
	return ret;
}

void *fg_allocv(struct fg_pool *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return fg_alloc(p, n * size);
}

char *fg_strdup(struct fg_pool *p, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = fg_alloc(p, n);

	if (d)
		memcpy(d, s, n);
	return d;
}

void fg_pool_free(struct fg_pool *p)
{
	struct fg_chunk *c, *next;

	for (c = p->head; c; c = next) {
		next = c->next;
		free(c);
	}
	p->head = NULL;
}

/* Errors */

int fg_err(struct fg_errs *e, const char *file, unsigned int line,
	   const char *object, const char *attr, const char *fmt, ...)
{
	struct dfg_flow_error *err;
	char buf[512];
	va_list ap;

	if (e->pub.n == e->cap) {
		unsigned int cap = e->cap ? e->cap * 2 : 16;
		struct dfg_flow_error *v = realloc(e->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		e->v = v;
		e->cap = cap;
		e->pub.v = v;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	err = &e->v[e->pub.n];
	*err = (struct dfg_flow_error){
		.file = fg_strdup(&e->pool, file),
		.line = line,
		.object = object ? fg_strdup(&e->pool, object) : NULL,
		.attr = attr ? fg_strdup(&e->pool, attr) : NULL,
		.msg = fg_strdup(&e->pool, buf),
	};
	if (!err->file || !err->msg || (object && !err->object) ||
	    (attr && !err->attr))
		return -ENOMEM;
	e->pub.n++;
	return 0;
}

/* Bytes of the UTF-8 character at @s that is printable, or 0. */
static unsigned int utf8_printable(const unsigned char *s)
{
	unsigned int n, k, cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	cp = s[0] & (0x7f >> n);
	/* a NUL ends the string before any byte past it is read */
	for (k = 1; k < n; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	/* C1 controls, overlong forms, surrogates, beyond Unicode */
	if (cp < 0xa0 || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/*
 * @s with every byte a terminal would act on (controls, DEL, bytes
 * that are not printable UTF-8) written as \xNN: names and values in
 * messages come from the file, whatever it holds.
 */
static int put_escaped(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned int n;

	while (*p) {
		if (*p >= 0x20 && *p < 0x7f) {
			if (putc(*p++, f) == EOF)
				return -1;
		} else if ((n = utf8_printable(p))) {
			if (fwrite(p, 1, n, f) != n)
				return -1;
			p += n;
		} else if (fprintf(f, "\\x%02x", *p++) < 0) {
			return -1;
		}
	}
	return 0;
}

int dfg_flow_errors_print(const struct dfg_flow_errors *errs, FILE *f)
{
	unsigned int i;

	if (!errs || !f)
		return -EINVAL;
	for (i = 0; i < errs->n; i++) {
		const struct dfg_flow_error *e = &errs->v[i];
		int saved = errno, ret;

		ret = put_escaped(f, e->file);
		if (!ret && e->line)
			ret = fprintf(f, ":%u", e->line) < 0;
		if (!ret && e->object)
			ret = fputs(": ", f) < 0 || put_escaped(f, e->object);
		if (!ret && e->attr)
			ret = fputs(": attribute '", f) < 0 ||
			      put_escaped(f, e->attr) || fputc('\'', f) < 0;
		if (!ret)
			ret = fputs(": ", f) < 0 || put_escaped(f, e->msg) ||
			      fputc('\n', f) < 0;
		errno = saved;
		if (ret)
			return -EIO;
	}
	return 0;
}

void dfg_flow_errors_free(struct dfg_flow_errors *errs)
{
	struct fg_errs *e;

	if (!errs)
		return;
	e = fg_container_of(errs, struct fg_errs, pub);
	fg_pool_free(&e->pool);
	free(e->v);
	free(e);
}

/* The graph */

struct fg_graph {
	struct dfg_flow	pub;
	struct fg_pool	pool;	/* everything of the graph, itself included */
};

void dfg_flow_free(struct dfg_flow *fg)
{
	struct fg_pool pool;

	if (!fg)
		return;
	pool = fg_container_of(fg, struct fg_graph, pub)->pool;
	fg_pool_free(&pool);
}

const char *dfg_flow_param(const struct dfg_flow_comp *c, const char *key)
{
	unsigned int i;

	if (!c || !key)
		return NULL;
	for (i = 0; i < c->nparams; i++)
		if (!strcmp(c->params[i].key, key))
			return c->params[i].value;
	return NULL;
}

int dfg_flow_find(const struct dfg_flow *fg, const char *name)
{
	unsigned int i;

	if (!fg || !name)
		return -EINVAL;
	for (i = 0; i < fg->ncomps; i++)
		if (!strcmp(fg->comps[i].name, name))
			return i;
	return -ENOENT;
}

static const char *const kind_names[] = {
	[DFG_FLOW_STRAIGHT]	= "straight",
	[DFG_FLOW_HASH]		= "hash",
	[DFG_FLOW_ROUNDROBIN]	= "roundrobin",
	[DFG_FLOW_BROADCAST]	= "broadcast",
	[DFG_FLOW_GATHER]		= "gather",
};

const char *dfg_flow_kind_name(enum dfg_flow_kind kind)
{
	if ((unsigned int)kind >= sizeof(kind_names) / sizeof(kind_names[0]))
		return NULL;
	return kind_names[kind];
}

/* Attributes graphviz draws with; accepted and not interpreted. */
static const char *const node_drawing[] = {
	"label", "shape", "style", "color", "fillcolor", "fontcolor",
	"fontname", "fontsize", "tooltip", "penwidth", "comment", NULL,
};

static const char *const edge_drawing[] = {
	"label", "color", "style", "penwidth", "fontcolor", "arrowhead",
	"comment", NULL,
};

static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

static unsigned int list_len(const char *const *list)
{
	unsigned int n = 0;

	while (list && list[n])
		n++;
	return n;
}

/* Build state */

struct comp_build {
	struct dfg_flow_typeinfo	info;
	int			ok;	/* degree, phase, type usable */
};

struct build {
	const struct fg_raw	*raw;
	struct fg_pool		*pool;
	struct fg_errs		*errs;
	struct dfg_flow_comp	*comps;
	struct dfg_flow_edge	*flows;
	struct comp_build	*cb;
	char			obj[256];
	int			nomem;
};

static const char *node_obj(struct build *b, unsigned int i)
{
	snprintf(b->obj, sizeof(b->obj), "node '%s'", b->raw->nodes[i].name);
	return b->obj;
}

static const char *flow_obj(struct build *b, unsigned int i)
{
	const struct fg_redge *e = &b->raw->edges[i];

	snprintf(b->obj, sizeof(b->obj), "flow '%s' -> '%s'",
		 b->raw->nodes[e->tail].name, b->raw->nodes[e->head].name);
	return b->obj;
}

#define berr(b, line, obj, attr, ...) do {				\
	if (fg_err((b)->errs, (b)->raw->file, line, obj, attr,		\
		   __VA_ARGS__))					\
		(b)->nomem = 1;						\
} while (0)

static int parse_uint(const char *s, unsigned int min, unsigned int max,
		      unsigned int *out)
{
	unsigned long v = 0;
	const char *p = s;

	if (!*p)
		return -EINVAL;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (*p - '0');
		if (v > max)
			return -ERANGE;
	}
	if (v < min)
		return -ERANGE;
	*out = v;
	return 0;
}

static void number_attr(struct build *b, unsigned int i,
			const struct fg_attr *a, unsigned int min,
			unsigned int max, unsigned int *out)
{
	int ret = parse_uint(a->value, min, max, out);

	if (ret == -EINVAL)
		berr(b, a->line, node_obj(b, i), a->key,
		     "not a number: '%s'", a->value);
	else if (ret)
		berr(b, a->line, node_obj(b, i), a->key,
		     "out of range %u..%u: '%s'", min, max, a->value);
	if (ret)
		b->cb[i].ok = 0;
}

static const struct fg_attr *find_attr(const struct fg_attr *attrs,
				       unsigned int n, const char *key)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(attrs[i].key, key))
			return &attrs[i];
	return NULL;
}

/*
 * Whether attribute @a of component @i is a parameter its type takes,
 * with a value of the declared kind; 0, or -EINVAL after an error.
 */
static int check_param(struct build *b, unsigned int i,
		       const struct fg_attr *a)
{
	const struct dfg_flow_typeinfo *info = &b->cb[i].info;
	const struct dfg_param_decl *d = NULL;
	char why[192];
	int ret;

	if (info->param_decls)
		d = comp_param_find(info->param_decls, a->key);
	if ((info->param_decls && !d) ||
	    (!info->param_decls && info->params &&
	     !in_list(info->params, a->key))) {
		berr(b, a->line, node_obj(b, i), a->key,
		     "unknown attribute (type '%s' takes no such parameter)",
		     b->comps[i].type);
		return -EINVAL;
	}
	if (!d)
		return 0;
	why[0] = '\0';
	ret = comp_param_check(d, a->value, why, sizeof(why));
	if (ret == -ENOMEM)
		b->nomem = 1;
	else if (ret)
		berr(b, a->line, node_obj(b, i), a->key, "%s", why);
	return ret;
}

/* Every parameter @i's type requires is there. */
static void check_required(struct build *b, unsigned int i)
{
	const struct fg_rnode *r = &b->raw->nodes[i];
	const struct dfg_param_decl *d = b->cb[i].info.param_decls;

	for (; d && d->name; d++)
		if ((d->flags & DFG_PARAM_REQUIRED) &&
		    !find_attr(r->attrs, r->nattrs, d->name))
			berr(b, r->line, node_obj(b, i), d->name,
			     "missing: type '%s' requires it", b->comps[i].type);
}

static void build_comp(struct build *b, const struct dfg_flow_types *types,
		       unsigned int i)
{
	const struct fg_rnode *r = &b->raw->nodes[i];
	struct dfg_flow_comp *c = &b->comps[i];
	struct comp_build *cb = &b->cb[i];
	const struct fg_attr *type = find_attr(r->attrs, r->nattrs, "type");
	struct dfg_flow_param *params;
	unsigned int k, num;

	c->index = i;
	c->name = r->name;
	c->line = r->line;
	c->degree = 1;
	c->foldable = true;
	c->interior = true;
	cb->ok = 1;
	cb->info = (struct dfg_flow_typeinfo){ .foldable = true,
					     .interior = true };
	if (!type || !*type->value) {
		berr(b, type ? type->line : r->line, node_obj(b, i), "type",
		     "missing: every component needs a type");
		cb->ok = 0;
	} else {
		c->type = type->value;
		if (types) {
			int ret = types->lookup(types->arg, c->type, &cb->info);

			if (ret == -ENOENT)
				berr(b, type->line, node_obj(b, i), "type",
				     "unknown component type '%s'", c->type);
			else if (ret)
				berr(b, type->line, node_obj(b, i), "type",
				     "looking up type '%s': %s", c->type,
				     strerror(-ret));
			if (ret) {
				cb->info = (struct dfg_flow_typeinfo){
					.foldable = true, .interior = true };
				cb->ok = 0;
			}
		}
		c->foldable = cb->info.foldable;
		c->interior = cb->info.interior;
	}

	params = fg_allocv(b->pool, r->nattrs + 1, sizeof(*params));
	if (!params) {
		b->nomem = 1;
		return;
	}
	c->params = params;
	for (k = 0; k < r->nattrs; k++) {
		const struct fg_attr *a = &r->attrs[k];

		if (!strcmp(a->key, "type") || in_list(node_drawing, a->key))
			continue;
		if (!strcmp(a->key, "degree")) {
			number_attr(b, i, a, 1, DFG_FLOW_MAX_DEGREE,
				    &c->degree);
		} else if (!strcmp(a->key, "phase")) {
			number_attr(b, i, a, 0, DFG_FLOW_MAX_PHASE, &c->phase);
		} else if (!strcmp(a->key, "foldable")) {
			if (!strcmp(a->value, "true") && !cb->info.foldable)
				berr(b, a->line, node_obj(b, i), a->key,
				     "type '%s' is not foldable (it has no callable compute)",
				     c->type);
			else if (!strcmp(a->value, "true"))
				c->foldable = true;
			else if (!strcmp(a->value, "false"))
				c->foldable = false;
			else
				berr(b, a->line, node_obj(b, i), a->key,
				     "must be true or false, not '%s'",
				     a->value);
		} else if (!strcmp(a->key, "role")) {
			if (!strcmp(a->value, "any") && !cb->info.interior)
				berr(b, a->line, node_obj(b, i), a->key,
				     "type '%s' can only be a root", c->type);
			else if (!strcmp(a->value, "any"))
				c->interior = true;
			else if (!strcmp(a->value, "root"))
				c->interior = false;
			else
				berr(b, a->line, node_obj(b, i), a->key,
				     "must be root or any, not '%s'", a->value);
		} else if (!strcmp(a->key, "set")) {
			if (!*a->value)
				berr(b, a->line, node_obj(b, i), a->key,
				     "empty set name");
			else if (a->value[0] == 's' &&
				 !parse_uint(a->value + 1, 0, UINT_MAX, &num))
				berr(b, a->line, node_obj(b, i), a->key,
				     "'%s': s<number> names the unnamed sets",
				     a->value);
			c->pin = *a->value ? a->value : NULL;
		} else if (!check_param(b, i, a)) {
			params[c->nparams].key = a->key;
			params[c->nparams].value = a->value;
			c->nparams++;
		}
	}
	check_required(b, i);
}

/* Resolves port @name of component @ci (@out: an output port). */
static int resolve_port(struct build *b, unsigned int fi, unsigned int line,
			const char *attr, unsigned int ci, int out,
			const char *name, unsigned int *port)
{
	const struct comp_build *cb = &b->cb[ci];
	const char *const *ports = out ? cb->info.out_ports : cb->info.in_ports;
	unsigned int n = list_len(ports), k;
	int ret;

	if (ports) {
		if (!name) {
			if (n) {
				*port = 0;
				return 0;
			}
			berr(b, line, flow_obj(b, fi), attr,
			     "type '%s' has no %s ports", b->comps[ci].type,
			     out ? "output" : "input");
			return -EINVAL;
		}
		for (k = 0; k < n; k++) {
			if (!strcmp(ports[k], name)) {
				*port = k;
				return 0;
			}
		}
		berr(b, line, flow_obj(b, fi), attr,
		     "type '%s' has no %s port '%s'", b->comps[ci].type,
		     out ? "output" : "input", name);
		return -EINVAL;
	}
	*port = 0;
	ret = name ? parse_uint(name, 0, FG_MAX_PORTS - 1, port) : 0;
	if (ret) {
		berr(b, line, flow_obj(b, fi), attr,
		     "port '%s': type '%s' names no ports, use a number 0..%u",
		     name, b->comps[ci].type ? b->comps[ci].type : "?",
		     FG_MAX_PORTS - 1);
		return ret;
	}
	n = out ? cb->info.max_out : cb->info.max_in;
	if (!cb->info.ports_declared || *port < n)
		return 0;
	if (!n)
		berr(b, line, flow_obj(b, fi), attr, "type '%s' has no %s ports",
		     b->comps[ci].type, out ? "output" : "input");
	else
		berr(b, line, flow_obj(b, fi), attr,
		     "port %u: type '%s' has %s ports 0..%u", *port,
		     b->comps[ci].type, out ? "output" : "input", n - 1);
	return -EINVAL;
}

/*
 * Ports of @ci against its type's counts: no fewer than the type needs,
 * none left without a flow below the highest used.
 */
static void check_ports(struct build *b, unsigned int ci)
{
	const struct dfg_flow_typeinfo *info = &b->cb[ci].info;
	unsigned int out, k, p;

	if (!info->ports_declared || !b->cb[ci].ok)
		return;
	for (out = 0; out < 2; out++) {
		unsigned int min = out ? info->min_out : info->min_in;
		unsigned int max = out ? info->max_out : info->max_in;
		unsigned char used[FG_MAX_PORTS] = { 0 };
		unsigned int n = 0;
		bool bad = false;

		for (k = 0; k < b->raw->nedges; k++) {
			const struct dfg_flow_edge *f = &b->flows[k];

			if (out ? f->src != ci : f->dst != ci)
				continue;
			p = out ? f->src_port : f->dst_port;
			bad |= p >= max;	/* reported by resolve_port() */
			used[p] = 1;
			n = p + 1 > n ? p + 1 : n;
		}
		if (bad)
			continue;
		if (n < min)
			berr(b, b->comps[ci].line, node_obj(b, ci), NULL,
			     "type '%s' needs %u %s flow%s, has %u",
			     b->comps[ci].type, min, out ? "output" : "input",
			     min == 1 ? "" : "s", n);
		for (p = 0; p < n; p++)
			if (!used[p])
				berr(b, b->comps[ci].line, node_obj(b, ci),
				     NULL, "%s port %u has no flow (%u used)",
				     out ? "output" : "input", p, n);
	}
}

/* Port name from from_port/to_port or DOT's tailport/headport. */
static int port_attr(struct build *b, unsigned int fi, const char *attr,
		     const char *dot_attr, const char **name,
		     unsigned int *line)
{
	const struct fg_redge *e = &b->raw->edges[fi];
	const struct fg_attr *a = find_attr(e->attrs, e->nattrs, attr);
	const struct fg_attr *d = find_attr(e->attrs, e->nattrs, dot_attr);

	*name = NULL;
	*line = e->line;
	if (a && d && strcmp(a->value, d->value)) {
		berr(b, a->line, flow_obj(b, fi), attr,
		     "'%s' but the DOT port says '%s'", a->value, d->value);
		return -EINVAL;
	}
	if (!a)
		a = d;
	if (a && *a->value) {
		*name = a->value;
		*line = a->line;
	}
	return 0;
}

static void build_flow(struct build *b, unsigned int fi)
{
	const struct fg_redge *e = &b->raw->edges[fi];
	struct dfg_flow_edge *f = &b->flows[fi];
	const struct dfg_flow_comp *src = &b->comps[e->tail];
	const struct dfg_flow_comp *dst = &b->comps[e->head];
	const struct fg_attr *kind = NULL, *key = NULL;
	unsigned int k, line;
	const char *name;

	f->index = fi;
	f->src = e->tail;
	f->dst = e->head;
	f->line = e->line;
	f->kind = DFG_FLOW_STRAIGHT;
	for (k = 0; k < e->nattrs; k++) {
		const struct fg_attr *a = &e->attrs[k];

		if (!strcmp(a->key, "flow"))
			kind = a;
		else if (!strcmp(a->key, "key"))
			key = a;
		else if (strcmp(a->key, "from_port") &&
			 strcmp(a->key, "to_port") &&
			 strcmp(a->key, "tailport") &&
			 strcmp(a->key, "headport") &&
			 !in_list(edge_drawing, a->key))
			berr(b, a->line, flow_obj(b, fi), a->key,
			     "unknown attribute");
	}
	if (kind) {
		for (k = 0; k <= DFG_FLOW_GATHER; k++)
			if (!strcmp(kind->value, kind_names[k]))
				break;
		if (k > DFG_FLOW_GATHER)
			berr(b, kind->line, flow_obj(b, fi), "flow",
			     "unknown flow kind '%s' (straight, hash, roundrobin, broadcast or gather)",
			     kind->value);
		else
			f->kind = k;
	}
	if (f->kind == DFG_FLOW_HASH && !(key && *key->value))
		berr(b, kind->line, flow_obj(b, fi), "key",
		     "missing: a hash flow needs the key to hash on");
	else if (f->kind != DFG_FLOW_HASH && key)
		berr(b, key->line, flow_obj(b, fi), "key",
		     "only hash flows have a key");
	else if (key)
		f->key = key->value;

	if (e->tail == e->head)
		berr(b, e->line, flow_obj(b, fi), NULL,
		     "a component cannot feed itself (cycle)");

	if (!port_attr(b, fi, "from_port", "tailport", &name, &line))
		resolve_port(b, fi, line, "from_port", e->tail, 1, name,
			     &f->src_port);
	if (!port_attr(b, fi, "to_port", "headport", &name, &line))
		resolve_port(b, fi, line, "to_port", e->head, 0, name,
			     &f->dst_port);

	if (!b->cb[e->tail].ok || !b->cb[e->head].ok)
		return;
	if (f->kind == DFG_FLOW_STRAIGHT && src->degree != dst->degree)
		berr(b, kind ? kind->line : e->line, flow_obj(b, fi), "flow",
		     "straight flow from degree %u to degree %u: repartition it (hash, roundrobin, broadcast or gather)",
		     src->degree, dst->degree);
	if (f->kind == DFG_FLOW_GATHER && dst->degree != 1)
		berr(b, kind->line, flow_obj(b, fi), "flow",
		     "a gather flow ends in a serial component, not degree %u",
		     dst->degree);
	if (src->phase > dst->phase)
		berr(b, e->line, flow_obj(b, fi), "phase",
		     "goes back from phase %u to phase %u", src->phase,
		     dst->phase);
	if (f->kind != DFG_FLOW_STRAIGHT && src->phase == dst->phase &&
	    src->degree > DFG_FLOW_MAX_FANIN)
		berr(b, kind->line, flow_obj(b, fi), "flow",
		     "a %s flow inside a phase comes from at most %u instances, not %u (a later phase takes any number)",
		     kind_names[f->kind], DFG_FLOW_MAX_FANIN, src->degree);
}

/* Port counts: declared names, or the highest number used plus one. */
static unsigned int port_count(struct build *b, unsigned int ci, int out)
{
	const struct comp_build *cb = &b->cb[ci];
	const char *const *names = out ? cb->info.out_ports :
					 cb->info.in_ports;
	unsigned int n = list_len(names), k;
	const struct dfg_flow_edge *f;

	if (!names) {
		for (k = 0; k < b->raw->nedges; k++) {
			f = &b->flows[k];
			if (out && f->src == ci && f->src_port >= n)
				n = f->src_port + 1;
			if (!out && f->dst == ci && f->dst_port >= n)
				n = f->dst_port + 1;
		}
	}
	return n;
}

static int fill_ports(struct build *b, unsigned int ci)
{
	struct dfg_flow_comp *c = &b->comps[ci];
	struct comp_build *cb = &b->cb[ci];
	struct dfg_flow_port *in, *out;
	unsigned int *inf, *outf, k, nin_flows = 0, nout_flows = 0;
	char num[16];

	c->nin = port_count(b, ci, 0);
	c->nout = port_count(b, ci, 1);
	in = fg_allocv(b->pool, c->nin + 1, sizeof(*in));
	out = fg_allocv(b->pool, c->nout + 1, sizeof(*out));
	for (k = 0; k < b->raw->nedges; k++) {
		nin_flows += b->flows[k].dst == ci;
		nout_flows += b->flows[k].src == ci;
	}
	inf = fg_allocv(b->pool, nin_flows + 1, sizeof(*inf));
	outf = fg_allocv(b->pool, nout_flows + 1, sizeof(*outf));
	if (!in || !out || !inf || !outf)
		return -ENOMEM;
	c->in = in;
	c->out = out;
	c->in_flows = inf;
	c->out_flows = outf;
	for (k = 0; k < b->raw->nedges; k++) {
		if (b->flows[k].dst == ci)
			inf[c->nin_flows++] = k;
		if (b->flows[k].src == ci)
			outf[c->nout_flows++] = k;
	}
	for (k = 0; k < c->nin + c->nout; k++) {
		int isout = k >= c->nin;
		unsigned int p = isout ? k - c->nin : k;
		struct dfg_flow_port *port = isout ? &out[p] : &in[p];
		const char *const *names = isout ? cb->info.out_ports :
						   cb->info.in_ports;
		unsigned int *flows, j, n = 0;

		snprintf(num, sizeof(num), "%u", p);
		port->name = fg_strdup(b->pool, names ? names[p] : num);
		flows = fg_allocv(b->pool, nin_flows + nout_flows + 1,
				  sizeof(*flows));
		if (!port->name || !flows)
			return -ENOMEM;
		for (j = 0; j < b->raw->nedges; j++) {
			const struct dfg_flow_edge *f = &b->flows[j];

			if ((isout && f->src == ci && f->src_port == p) ||
			    (!isout && f->dst == ci && f->dst_port == p))
				flows[n++] = j;
		}
		port->flows = flows;
		port->nflows = n;
	}
	return 0;
}

/*
 * Topological order: reverse post-order of a depth-first walk from the
 * sources in reverse file order, following each component's flows in
 * reverse file order, so that the first source and, below a component,
 * its first branch come first. A second round, in file order, starts
 * from whatever the sources do not reach (cycles only), to report them.
 */
static int topo_sort(struct build *b, unsigned int *topo)
{
	unsigned int n = b->raw->nnodes, *stack, *next, top = 0;
	unsigned int nout = n, root, k;
	unsigned char *state;	/* 0 new, 1 on the walk's path, 2 done */
	int ret = 0;

	stack = calloc(n + 1, sizeof(*stack));
	next = calloc(n + 1, sizeof(*next));
	state = calloc(n + 1, 1);
	if (!stack || !next || !state) {
		ret = -ENOMEM;
		goto out;
	}
	/* Sources first (reverse file order), then whatever is in cycles. */
	for (k = 2 * n; k-- > 0;) {
		root = k >= n ? k - n : n - 1 - k;
		if (state[root] || (k >= n && b->comps[root].nin_flows))
			continue;
		stack[top++] = root;
		state[root] = 1;
		next[root] = b->comps[root].nout_flows;
		while (top) {
			unsigned int u = stack[top - 1], v, fi;

			if (!next[u]) {
				state[u] = 2;
				topo[--nout] = u;
				top--;
				continue;
			}
			fi = b->comps[u].out_flows[--next[u]];
			v = b->flows[fi].dst;
			if (state[v] == 1) {
				char path[512];
				size_t len = 0;
				unsigned int j;

				for (j = top; j-- > 0 && stack[j] != v;)
					;
				for (; j < top && len < sizeof(path); j++)
					len += snprintf(path + len,
							sizeof(path) - len,
							"'%s' -> ",
							b->comps[stack[j]].name);
				if (len < sizeof(path))
					snprintf(path + len, sizeof(path) - len,
						 "'%s'", b->comps[v].name);
				berr(b, b->flows[fi].line, flow_obj(b, fi),
				     NULL, "closes a cycle: %s", path);
				ret = -EINVAL;
			}
			if (state[v])
				continue;
			state[v] = 1;
			next[v] = b->comps[v].nout_flows;
			stack[top++] = v;
		}
	}
out:
	free(stack);
	free(next);
	free(state);
	return ret;
}

int fg_build(const struct fg_raw *raw, struct fg_pool *pool,
	     const struct dfg_flow_types *types, struct fg_errs *errs,
	     struct dfg_flow **fgp)
{
	struct build b = { .raw = raw, .pool = pool, .errs = errs };
	unsigned int n = raw->nnodes, i;
	struct fg_graph *g;
	unsigned int *topo;
	int ret = -ENOMEM;

	g = fg_alloc(pool, sizeof(*g));
	b.comps = fg_allocv(pool, n + 1, sizeof(*b.comps));
	b.flows = fg_allocv(pool, raw->nedges + 1, sizeof(*b.flows));
	topo = fg_allocv(pool, n + 1, sizeof(*topo));
	b.cb = calloc(n + 1, sizeof(*b.cb));
	if (!g || !b.comps || !b.flows || !topo || !b.cb)
		goto out;
	if (!n)
		berr(&b, 0, NULL, NULL, "the graph has no components");
	for (i = 0; i < n; i++)
		build_comp(&b, types, i);
	for (i = 0; i < raw->nedges; i++)
		build_flow(&b, i);
	for (i = 0; i < n; i++)
		check_ports(&b, i);
	if (b.nomem)
		goto out;
	if (errs->pub.n) {
		ret = 0;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (fill_ports(&b, i))
			goto out;
	ret = topo_sort(&b, topo);
	if (b.nomem)
		ret = -ENOMEM;
	if (ret == -EINVAL)
		ret = 0;
	if (ret || errs->pub.n)
		goto out;

	g->pub = (struct dfg_flow){
		.file = raw->file, .name = raw->name,
		.ncomps = n, .nflows = raw->nedges,
		.comps = b.comps, .flows = b.flows, .topo = topo,
	};
	g->pool = *pool;
	pool->head = NULL;
	*fgp = &g->pub;
out:
	free(b.cb);
	return ret;
}
