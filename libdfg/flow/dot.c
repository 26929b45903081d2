// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: reading dataflow graphs from DOT files with libcgraph.
 *
 * libcgraph parses; this file only follows the parse to learn where each
 * node, edge and attribute value came from, which libcgraph does not keep:
 *
 *  - an I/O discipline feeds the lexer so that the number of bytes handed
 *    out (@pos) is how far the lexer has got: one byte per read, except
 *    runs in which the lexer cannot end a token (an identifier, blanks,
 *    the inside of a string or comment), which go in one read. Runs
 *    matter: flex moves a token it has not finished to the start of its
 *    buffer on every read, so a long token fed byte by byte costs the
 *    square of its length (a 100 KB name took a minute);
 *  - an id discipline sees every object libcgraph registers; on the root
 *    graph it pushes a callback discipline whose node/edge "insert" and
 *    "modify" callbacks record the object's, or the attribute's, position;
 *  - the parser applies a statement's attributes after reading one token
 *    past it, so the position is corrected back to the last occurrence of
 *    the node name or "key =" before it.
 *
 * libcgraph's parser keeps global state (and so does this file during a
 * parse): one load at a time, under load_lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <graphviz/cgraph.h>

#include "flow_impl.h"

/* Where libcgraph set one attribute value of one object. */
struct fg_mod {
	void		*obj;
	const char	*key;		/* libcgraph's symbol name */
	size_t		pos;
	size_t		seq;		/* order of the modifications */
};

struct fg_objpos {
	void		*obj;
	size_t		pos;
};

/* Where the lexer is, as lexer_read() follows it (see lex_step()). */
enum lex {
	LX_INIT,	/* between tokens, or in an identifier */
	LX_SLASH,	/* after a '/' */
	LX_STR,		/* in a quoted string */
	LX_STR_ESC,	/* after a backslash in a quoted string */
	LX_COM,		/* in a comment */
	LX_COM_STAR,	/* after a '*' in a comment */
	LX_LINE,	/* in a "//" or "#" comment */
	LX_HTML,	/* in an HTML string, @html levels deep */
};

struct loader {
	const char	*text;
	size_t		len;
	size_t		pos;		/* bytes handed to the lexer */
	enum lex	lex;
	unsigned int	html;
	unsigned int	*line_start;	/* offset of each line's first byte */
	unsigned int	nlines;
	struct fg_mod	*mods;
	size_t		nmods, capmods;
	struct fg_objpos *objs;
	size_t		nobjs, capobjs;
	char		*msg;		/* libcgraph's messages, collected */
	size_t		msglen, msgcap;
	int		nomem;
};

/* Serialises every use of libcgraph in libdfg. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
/* The load in progress, for callbacks that get no closure of ours. */
static struct loader *cur;

void fg_cgraph_lock(void)
{
	pthread_mutex_lock(&load_lock);
}

void fg_cgraph_unlock(void)
{
	pthread_mutex_unlock(&load_lock);
}

static int is_idchar(unsigned char c)
{
	return c == '_' || c == '.' || c >= 0x80 ||
	       (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

/*
 * Follows the lexer over byte @c (@bol: at the start of a line). Returns
 * the byte's class: 0 for one that may end a token or change the state
 * (it goes alone), else a class whose runs go in one read.
 */
static int lex_step(struct loader *l, unsigned char c, bool bol)
{
	switch (l->lex) {
	case LX_SLASH:
		l->lex = LX_INIT;
		if (c == '*')
			l->lex = LX_COM;
		else if (c == '/')
			l->lex = LX_LINE;
		else
			return lex_step(l, c, bol);
		return 0;
	case LX_INIT:
		if (is_idchar(c))
			return 1;
		if (c == ' ' || c == '\t' || c == '\r')
			return 2;
		if (c == '"')
			l->lex = LX_STR;
		else if (c == '/')
			l->lex = LX_SLASH;
		else if (c == '#' && bol)
			l->lex = LX_LINE;
		else if (c == '<')
			l->lex = LX_HTML;
		l->html = 1;	/* the '<' that opens an HTML string */
		return 0;
	case LX_STR:
		if (c == '"')
			l->lex = LX_INIT;
		else if (c == '\\')
			l->lex = LX_STR_ESC;
		else
			return 3;
		return 0;
	case LX_STR_ESC:
		l->lex = LX_STR;
		return 0;
	case LX_COM:
		if (c != '*')
			return 4;
		l->lex = LX_COM_STAR;
		return 0;
	case LX_COM_STAR:
		if (c == '/')
			l->lex = LX_INIT;
		else if (c != '*')
			l->lex = LX_COM;
		return 0;
	case LX_LINE:
		if (c != '\n')
			return 5;
		l->lex = LX_INIT;
		return 0;
	case LX_HTML:
		if (c == '<')
			l->html++;
		else if (c == '>' && !--l->html)
			l->lex = LX_INIT;
		else if (c != '>')
			return 6;
		return 0;
	}
	return 0;
}

/* Hands the lexer the next byte, or the run of one class it starts. */
static int lexer_read(void *chan, char *buf, int bufsize)
{
	struct loader *l = chan;
	const unsigned char *t = (const unsigned char *)l->text;
	size_t start = l->pos, end = l->pos;
	int cls = -1;

	while (end < l->len && end - start < (size_t)bufsize) {
		enum lex lex = l->lex;
		unsigned int html = l->html;
		int k = lex_step(l, t[end], !end || t[end - 1] == '\n');

		if (cls >= 0 && k != cls) {
			l->lex = lex;	/* not this one's run: next read */
			l->html = html;
			break;
		}
		end++;
		if (!k)
			break;
		cls = k;
	}
	memcpy(buf, l->text + start, end - start);
	l->pos = end;
	return (int)(end - start);
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

static void note_obj(struct loader *l, void *obj)
{
	if (grow((void **)&l->objs, &l->capobjs, l->nobjs, sizeof(*l->objs))) {
		l->nomem = 1;
		return;
	}
	l->objs[l->nobjs++] = (struct fg_objpos){ .obj = obj, .pos = l->pos };
}

static void cb_insert(Agraph_t *g, Agobj_t *obj, void *arg)
{
	(void)g;
	note_obj(arg, obj);
}

static void cb_modify(Agraph_t *g, Agobj_t *obj, void *arg, Agsym_t *sym)
{
	struct loader *l = arg;

	(void)g;
	if (grow((void **)&l->mods, &l->capmods, l->nmods, sizeof(*l->mods))) {
		l->nomem = 1;
		return;
	}
	l->mods[l->nmods] = (struct fg_mod){
		.obj = obj, .key = sym->name, .pos = l->pos, .seq = l->nmods,
	};
	l->nmods++;
}

static Agcbdisc_t follow_cb = {
	.node = { .ins = cb_insert, .mod = cb_modify },
	.edge = { .ins = cb_insert, .mod = cb_modify },
};

static void id_register(void *state, int objtype, void *obj)
{
	AgIdDisc.idregister(state, objtype, obj);
	if (cur && objtype == AGRAPH && agroot(obj) == obj)
		agpushdisc(obj, &follow_cb, cur);
}

static int collect_msg(char *s)
{
	struct loader *l = cur;
	size_t n = strlen(s);

	if (!l)
		return 0;
	if (l->msglen + n + 1 > l->msgcap) {
		size_t cap = (l->msglen + n + 1) * 2;
		char *m = realloc(l->msg, cap);

		if (!m) {
			l->nomem = 1;
			return 0;
		}
		l->msg = m;
		l->msgcap = cap;
	}
	memcpy(l->msg + l->msglen, s, n + 1);
	l->msglen += n;
	return 0;
}

static int index_lines(struct loader *l)
{
	unsigned int n = 1;
	size_t i;

	for (i = 0; i < l->len; i++)
		n += l->text[i] == '\n';
	l->line_start = malloc(n * sizeof(*l->line_start));
	if (!l->line_start)
		return -ENOMEM;
	l->line_start[0] = 0;
	l->nlines = 1;
	for (i = 0; i < l->len; i++)
		if (l->text[i] == '\n')
			l->line_start[l->nlines++] = i + 1;
	return 0;
}

static unsigned int line_of(const struct loader *l, size_t off)
{
	unsigned int lo = 0, hi = l->nlines;

	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (l->line_start[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo + 1;
}

/* What find_back() looks for. */
enum find {
	FIND_NAME,	/* a node name */
	FIND_ASSIGN,	/* an attribute: name followed by '=' */
	FIND_HEAD,	/* an edge head: name preceded by "->" */
};

static int is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Does the occurrence of @word at @i of length @n match @what? */
static int token_at(const struct loader *l, size_t i, size_t n,
		    enum find what)
{
	const unsigned char *t = (const unsigned char *)l->text;
	size_t j = i + n;

	if (i > 0 && is_idchar(t[i - 1]))
		return 0;
	if (j < l->len && t[j] == '"')
		j++;
	if (j < l->len && is_idchar(t[j]))
		return 0;
	if (what == FIND_ASSIGN) {
		while (j < l->len && is_space(t[j]))
			j++;
		return j < l->len && t[j] == '=';
	}
	if (what == FIND_HEAD) {
		if (i > 0 && t[i - 1] == '"')
			i--;
		while (i > 0 && is_space(t[i - 1]))
			i--;
		return i >= 2 && t[i - 1] == '>' && t[i - 2] == '-';
	}
	return 1;
}

/*
 * The line of the last occurrence of @word as @what before @pos; 0 if
 * there is none (a name written with escapes, a DOT port "a:p").
 */
static unsigned int find_back(const struct loader *l, size_t pos,
			      const char *word, enum find what)
{
	size_t n = strlen(word), end = pos < l->len ? pos : l->len;
	size_t i;

	if (!n || n > end)
		return 0;
	for (i = end - n + 1; i-- > 0;)
		if (!memcmp(l->text + i, word, n) && token_at(l, i, n, what))
			return line_of(l, i);
	return 0;
}

static int ptr_cmp(const void *x, const void *y)
{
	uintptr_t a = (uintptr_t)x, b = (uintptr_t)y;

	return a < b ? -1 : a > b;
}

static int objpos_cmp(const void *a, const void *b)
{
	return ptr_cmp(((const struct fg_objpos *)a)->obj,
		       ((const struct fg_objpos *)b)->obj);
}

/* By object, then in the order libcgraph set them. */
static int mod_cmp(const void *a, const void *b)
{
	const struct fg_mod *x = a, *y = b;

	return ptr_cmp(x->obj, y->obj) ?: (x->seq > y->seq) - (x->seq < y->seq);
}

static void sort_positions(struct loader *l)
{
	if (l->nobjs)
		qsort(l->objs, l->nobjs, sizeof(*l->objs), objpos_cmp);
	if (l->nmods)
		qsort(l->mods, l->nmods, sizeof(*l->mods), mod_cmp);
}

static size_t obj_pos(const struct loader *l, void *obj)
{
	struct fg_objpos key = { .obj = obj }, *o;

	if (!l->nobjs)
		return 0;
	o = bsearch(&key, l->objs, l->nobjs, sizeof(*l->objs), objpos_cmp);
	return o ? o->pos : 0;
}

/* The line of @obj: where its name is, or where the parser was. */
static unsigned int obj_line(const struct loader *l, void *obj,
			     const char *name, enum find what)
{
	size_t pos = obj_pos(l, obj);

	return find_back(l, pos, name, what) ?:
	       line_of(l, pos && pos <= l->len ? pos - 1 : 0);
}

/* The last time libcgraph set @obj's attribute @key, or NULL. */
static const struct fg_mod *last_mod(const struct loader *l, void *obj,
				     const char *key)
{
	const struct fg_mod *found = NULL;
	size_t lo = 0, hi = l->nmods;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ptr_cmp(l->mods[mid].obj, obj) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < l->nmods && l->mods[lo].obj == obj; lo++)
		if (!strcmp(l->mods[lo].key, key))
			found = &l->mods[lo];
	return found;
}

/*
 * Attributes of @obj: every declared one it set, or that has a non-empty
 * value (a default); for edges also the key (libcgraph's edge name).
 */
static int read_attrs(struct loader *l, struct fg_pool *pool, Agraph_t *g,
		      int kind, void *obj, unsigned int objline,
		      struct fg_attr **attrsp, unsigned int *nattrsp)
{
	unsigned int n = 0, i = 0;
	struct fg_attr *a;
	Agsym_t *sym;
	char *key = kind == AGEDGE ? agnameof(obj) : NULL;

	for (sym = agnxtattr(g, kind, NULL); sym; sym = agnxtattr(g, kind, sym))
		n++;
	a = fg_allocv(pool, n + 1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (sym = agnxtattr(g, kind, NULL); sym; sym = agnxtattr(g, kind, sym)) {
		const struct fg_mod *m = last_mod(l, obj, sym->name);
		char *v = agxget(obj, sym);
		unsigned int line;

		if (!m && !(v && *v))
			continue;
		line = m ? find_back(l, m->pos, sym->name, FIND_ASSIGN) : 0;
		a[i].key = fg_strdup(pool, sym->name);
		a[i].value = fg_strdup(pool, v ? v : "");
		a[i].line = line ? line : objline;
		if (!a[i].key || !a[i].value)
			return -ENOMEM;
		i++;
	}
	if (key && *key) {
		a[i].key = "key";
		a[i].value = fg_strdup(pool, key);
		a[i].line = objline;
		if (!a[i].value)
			return -ENOMEM;
		i++;
	}
	*attrsp = a;
	*nattrsp = i;
	return 0;
}

static int edge_cmp(const void *a, const void *b)
{
	uint64_t x = AGSEQ(*(Agedge_t *const *)a);
	uint64_t y = AGSEQ(*(Agedge_t *const *)b);

	return x < y ? -1 : x > y;
}

/* @nodes is in libcgraph's node order, which is increasing sequence. */
static int node_index(Agnode_t *n, Agnode_t **nodes, unsigned int nnodes)
{
	unsigned int lo = 0, hi = nnodes;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (AGSEQ(nodes[mid]) == AGSEQ(n))
			return mid;
		if (AGSEQ(nodes[mid]) < AGSEQ(n))
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Copies the parsed graph into @raw (file order), with positions. */
static int extract(struct loader *l, Agraph_t *g, struct fg_pool *pool,
		   struct fg_raw *raw)
{
	unsigned int nn = agnnodes(g), ne = agnedges(g), i;
	Agnode_t **nodes = NULL, *n;
	Agedge_t **edges = NULL, *e;
	char *gname = agnameof(g);
	int ret = -ENOMEM;

	/* libcgraph names an anonymous graph "%<id>" */
	raw->name = fg_strdup(pool, gname && gname[0] != '%' ? gname : "");
	raw->nodes = fg_allocv(pool, nn + 1, sizeof(*raw->nodes));
	raw->edges = fg_allocv(pool, ne + 1, sizeof(*raw->edges));
	nodes = calloc(nn + 1, sizeof(*nodes));
	edges = calloc(ne + 1, sizeof(*edges));
	if (!raw->name || !raw->nodes || !raw->edges || !nodes || !edges)
		goto out;

	i = 0;
	for (n = agfstnode(g); n; n = agnxtnode(g, n))
		nodes[i++] = n;
	raw->nnodes = nn;
	for (i = 0; i < nn; i++) {
		struct fg_rnode *r = &raw->nodes[i];
		char *name = agnameof(nodes[i]);

		r->name = fg_strdup(pool, name);
		if (!r->name)
			goto out;
		r->line = obj_line(l, nodes[i], name, FIND_NAME);
		ret = read_attrs(l, pool, g, AGNODE, nodes[i], r->line,
				 &r->attrs, &r->nattrs);
		if (ret)
			goto out;
	}

	i = 0;
	for (n = agfstnode(g); n; n = agnxtnode(g, n))
		for (e = agfstout(g, n); e; e = agnxtout(g, e))
			edges[i++] = e;
	qsort(edges, i, sizeof(*edges), edge_cmp);
	raw->nedges = i;
	for (i = 0; i < raw->nedges; i++) {
		struct fg_redge *r = &raw->edges[i];
		Agnode_t *h = aghead(edges[i]);

		r->tail = node_index(agtail(edges[i]), nodes, nn);
		r->head = node_index(h, nodes, nn);
		r->line = obj_line(l, edges[i], agnameof(h), FIND_HEAD);
		ret = read_attrs(l, pool, g, AGEDGE, edges[i], r->line,
				 &r->attrs, &r->nattrs);
		if (ret)
			goto out;
	}
	ret = 0;
out:
	free(nodes);
	free(edges);
	return ret;
}

/*
 * Turns libcgraph's collected messages ("Error: file: syntax error in
 * line 3 near '->'") into errors with their line.
 */
static int report_msgs(struct loader *l, const char *file,
		       struct fg_errs *errs)
{
	char *s = l->msg, *nl;
	int ret = 0;

	while (s && *s) {
		unsigned int line = 0;
		char *p;
		size_t flen = strlen(file);

		nl = strchr(s, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(s, "Error: ", 7))
			s += 7;
		else if (!strncmp(s, "Warning: ", 9))
			s += 9;
		if (!strncmp(s, file, flen) && !strncmp(s + flen, ": ", 2))
			s += flen + 2;
		p = strstr(s, " in line ");
		if (p && sscanf(p, " in line %u", &line) == 1) {
			char *q = p + 9;

			while (*q >= '0' && *q <= '9')
				q++;
			memmove(p, q, strlen(q) + 1);
		}
		if (*s)
			ret = fg_err(errs, file, line, NULL, NULL, "%s", s) ?: ret;
		s = nl ? nl + 1 : NULL;
	}
	return ret;
}

/* Reads graphs from @l to its end, which leaves the lexer's buffer empty. */
static void drain(struct loader *l, Agdisc_t *disc, int *more)
{
	Agraph_t *g;

	while ((g = agread(l, disc))) {
		*more = 1;
		agclose(g);
	}
}

/*
 * libcgraph's lexer also keeps its start condition across reads: a file
 * that ends inside a comment or a quoted or HTML string would leave the
 * next load lexing a comment. Probe with an empty graph; while that
 * fails, feed the lexer what ends each of those states. Returns how many
 * probes failed (0: the lexer was clean), -1 if it stays stuck.
 */
static int lexer_reset(Agdisc_t *disc)
{
	static const char *const closers[] = { "", "*/", "\"", ">" };
	unsigned int i;
	char probe[32];

	for (i = 0; i < 8; i++) {
		struct loader p = { .text = probe };
		int nerr = agerrors(), more = 0, ok;
		Agraph_t *g;

		p.len = snprintf(probe, sizeof(probe), "%s digraph { }",
				 closers[i % 4]);
		g = agread(&p, disc);
		drain(&p, disc, &more);
		ok = g && !more && agerrors() == nerr;
		if (g)
			agclose(g);
		if (ok)
			return i;
	}
	return -1;
}

/*
 * Parses @l's text: *@gp is NULL after a syntax error, *@more is set if
 * there was text for another graph, *@dirty if the file left the lexer
 * inside a comment or string.
 */
static int parse(struct loader *l, const char *file, Agraph_t **gp,
		 int *more, int *dirty)
{
	static Agiodisc_t io;
	static Agiddisc_t id;
	static Agdisc_t disc;
	agusererrf old_errf;
	int nerr = agerrors();
	Agraph_t *g;

	io = AgIoDisc;
	io.afread = lexer_read;
	id = AgIdDisc;
	id.idregister = id_register;
	disc = (Agdisc_t){ .mem = &AgMemDisc, .id = &id, .io = &io };

	old_errf = agseterrf(collect_msg);
	agsetfile((char *)file);
	cur = l;
	g = agread(l, &disc);
	*more = 0;
	if (g)
		drain(l, &disc, more);
	if (g && agerrors() != nerr) {
		agclose(g);
		g = NULL;
	}
	cur = NULL;	/* the probes' messages are not the file's */
	*dirty = lexer_reset(&disc) != 0;
	agsetfile(NULL);
	agseterrf(old_errf);
	*gp = g;
	return l->nomem ? -ENOMEM : 0;
}

static int errs_new(struct fg_errs **ep)
{
	*ep = calloc(1, sizeof(**ep));
	return *ep ? 0 : -ENOMEM;
}

int dfg_flow_parse(const char *text, size_t len, const char *path,
		   const struct dfg_flow_types *types, struct dfg_flow **fgp,
		   struct dfg_flow_errors **errsp)
{
	struct loader l = { .text = text, .len = len };
	struct fg_pool pool = { 0 };
	struct fg_raw raw = { 0 };
	struct fg_errs *errs;
	int more = 0, dirty = 0, ret;
	Agraph_t *g = NULL;

	if (fgp)
		*fgp = NULL;
	if (errsp)
		*errsp = NULL;
	if (!text || !path || !fgp || (types && !types->lookup) ||
	    len > INT_MAX)
		return -EINVAL;
	ret = errs_new(&errs);
	if (ret)
		return ret;
	ret = index_lines(&l);
	if (ret)
		goto out;
	raw.file = fg_strdup(&pool, path);
	if (!raw.file) {
		ret = -ENOMEM;
		goto out;
	}

	pthread_mutex_lock(&load_lock);
	ret = parse(&l, path, &g, &more, &dirty);
	if (!ret)
		ret = report_msgs(&l, path, errs);
	if (!ret && dirty && !errs->pub.n)
		ret = fg_err(errs, path, l.nlines, NULL, NULL,
			     "unterminated comment or string at the end");
	if (!ret && g && !agisdirected(g))
		ret = fg_err(errs, path, 1, NULL, NULL,
			     "not a digraph (flows have a direction)");
	if (!ret && more)
		ret = fg_err(errs, path, 0, NULL, NULL,
			     "more than one graph in the file");
	if (!ret && !g && !errs->pub.n)
		ret = fg_err(errs, path, 0, NULL, NULL, "no graph in the file");
	if (!ret && g && !errs->pub.n) {
		sort_positions(&l);
		ret = extract(&l, g, &pool, &raw);
	}
	if (g)
		agclose(g);
	pthread_mutex_unlock(&load_lock);
	if (ret)
		goto out;

	if (!errs->pub.n)
		ret = fg_build(&raw, &pool, types, errs, fgp);
	if (!ret && errs->pub.n)
		ret = -EINVAL;
out:
	fg_pool_free(&pool);	/* fg_build() took it over on success */
	free(l.line_start);
	free(l.mods);
	free(l.objs);
	free(l.msg);
	if (ret == -EINVAL && errsp)
		*errsp = &errs->pub;
	else
		dfg_flow_errors_free(&errs->pub);
	return ret;
}

static int read_file(const char *path, char **textp, size_t *lenp)
{
	int saved = errno, fd, ret = 0;
	size_t len = 0, cap = 4096;
	char *text = malloc(cap);
	ssize_t n;

	if (!text)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		if (len == cap) {
			char *t = cap < INT_MAX ? realloc(text, cap * 2) : NULL;

			if (!t) {
				ret = cap < INT_MAX ? -ENOMEM : -EFBIG;
				break;
			}
			text = t;
			cap *= 2;
		}
		n = read(fd, text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ret = -errno;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
out:
	errno = saved;
	if (ret) {
		free(text);
		return ret;
	}
	*textp = text;
	*lenp = len;
	return 0;
}

int dfg_flow_load(const char *path, const struct dfg_flow_types *types,
		  struct dfg_flow **fgp, struct dfg_flow_errors **errsp)
{
	size_t len;
	char *text;
	int ret;

	if (fgp)
		*fgp = NULL;
	if (errsp)
		*errsp = NULL;
	if (!path || !fgp)
		return -EINVAL;
	ret = read_file(path, &text, &len);
	if (ret)
		return ret;
	ret = dfg_flow_parse(text, len, path, types, fgp, errsp);
	free(text);
	return ret;
}
