/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: dataflow graph model, DOT loading and folding (procedure 400).
 *
 * This header is pure userspace planning: it needs neither the module nor
 * a dfg handle. (<dfg/graph.h> is something else: the kernel graph object.)
 *
 * Graph files
 * -----------
 * A dataflow graph is a DOT "digraph", read with graphviz's libcgraph.
 * Each node is a component, each edge a flow from an output port of the
 * upstream component to an input port of the downstream one.
 *
 * Node attributes:
 *   type=NAME          component type (required)
 *   degree=N           degree of parallelism: 1 serial (default), N-way
 *                      (1..DFG_FLOW_MAX_DEGREE)
 *   phase=N            execution phase, 0 (default)..DFG_FLOW_MAX_PHASE;
 *                      flows never go to an earlier phase
 *   foldable=BOOL      true|false; default from the component type (true
 *                      when no type registry is given); a type that is
 *                      not foldable cannot be made foldable
 *   role=root|any      "root": the component can only be the root of its
 *                      set, never folded below another; default from the
 *                      type ("any")
 *   set=NAME           manual set: components pinned to NAME fold only
 *                      with each other, unpinned ones only with unpinned
 *   label, shape, style, color, fillcolor, fontcolor, fontname,
 *   fontsize, tooltip, penwidth, comment
 *                      drawing only, ignored
 *   anything else      a parameter of the component, kept as a key/value
 *                      string; with a type registry, a key the type does
 *                      not declare is an error, and so are a value that is
 *                      not of its declared kind (a number, an expression,
 *                      one of a list...) and a required parameter left
 *                      out (struct dfg_param_decl)
 * Defaults set with "node [...]" count as set on each node.
 *
 * Edge attributes:
 *   from_port=P, to_port=P (or DOT's a:P -> b:Q, i.e. tailport/headport)
 *                      port names the type declares, or port numbers
 *                      (0 by default) for types that declare none; with
 *                      declared port counts, a port number past them and
 *                      too few ports used (an input left unfed) are
 *                      errors
 *   flow=KIND          straight (default) | hash | roundrobin | broadcast |
 *                      gather
 *   key=FIELD          the hash key; required by flow=hash, and only there
 *   label, color, style, penwidth, fontcolor, arrowhead, comment
 *                      drawing only, ignored
 * A straight flow does not repartition: both ends have the same degree.
 * A gather flow merges every partition into a serial (degree 1) input.
 * A repartitioning flow inside one phase (a kernel channel per
 * downstream instance, one producer ring per upstream instance) comes
 * from at most DFG_FLOW_MAX_FANIN upstream instances; one into a later
 * phase (spooled through files) from any number.
 * Graph attributes are not interpreted.
 *
 * Before anything runs, a graph is validated: unknown attributes, types,
 * kinds and ports, bad numbers, degree mismatches, flows to an earlier
 * phase, and cycles are errors. Every error names the file, the line, the
 * object (node or flow) and the attribute, e.g.
 *   "job.dot:12: node 'count': attribute 'degree': not a number: 'two'".
 * Loading is linear in the size of the file, whatever the length of its
 * tokens.
 * libcgraph reports syntax errors with their line; for nodes and flows the
 * loader follows libcgraph's parse through its I/O, id and callback
 * disciplines and records where each object and attribute value was
 * read (the parser reads one token ahead, which the loader corrects for
 * by finding the attribute's key before that point; in rare layouts a
 * line may be off by one). An attribute that only comes from a
 * "node [...]" default is reported at the node's first line.
 *
 * Folding
 * -------
 * dfg_plan_build() partitions the components into folded sets with
 * procedure 400 of Ab Initio's CN103778015 (see DESIGN.md): mark all
 * unassigned; walk the components in the graph's topological order
 * (struct dfg_flow.topo); the first unassigned component becomes the root of
 * a new set; a non-foldable root stays alone; otherwise the set grows,
 * pass after pass over that order, by every unassigned component directly
 * downstream of a member that
 *   - is foldable and may be interior (role=any),
 *   - has the root's degree and phase,
 *   - has the root's manual set (or none, as the root),
 *   - is fed only by straight flows from the members that feed it (at
 *     least one), and
 *   - if it has several input flows, has every upstream component in the
 *     set already (multi-input closure, claim 8);
 * until no component qualifies; then the next root. The result is
 * deterministic. Every set has one root, the only member fed from outside
 * the set; sets come out in an order in which every flow between sets goes
 * from an earlier set to a later one. DFG_PLAN_NO_FOLD gives one set per
 * component instead.
 *
 * The topological order is the reverse post-order of a depth-first walk
 * that starts at the sources in file order and follows each component's
 * flows in file order: a component's first downstream branch comes
 * before its second (this is the order the patent's Fig. 2B adds its
 * members in).
 *
 * Executing a plan
 * ----------------
 * Everything is plain read-only structs and index arrays. Per set:
 * members[] in topological order (members[0] is the root; run shutdown and
 * blips in this order); in_flows[] (all into the root) and out_flows[]
 * cross the set's boundary and need channels; internal_flows[] are direct
 * calls. A set of degree N runs N instances. Per phase, the sets to run in
 * that phase, phases in increasing order. Per component: ports, the flows
 * on each port, parameters (dfg_flow_param()).
 *
 * Memory: a struct dfg_flow owns all its strings and arrays; a plan refers
 * to its graph, which must outlive it.
 *
 * Threads: loading serialises on an internal lock (libcgraph's parser has
 * global state); everything else is reentrant. A program that also calls
 * libcgraph itself must not parse concurrently with dfg_flow_load().
 *
 * Errors: -errno returns, errno never changed.
 */
#ifndef _DFG_FLOW_H
#define _DFG_FLOW_H

#include <stdbool.h>
#include <stdio.h>

#include <dfg/component.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DFG_FLOW_MAX_DEGREE	1024
#define DFG_FLOW_MAX_PHASE	1024
/* Upstream instances of a repartitioning flow inside a phase. */
#define DFG_FLOW_MAX_FANIN	64

/* Flow kinds: straight keeps the partitioning, the others repartition. */
enum dfg_flow_kind {
	DFG_FLOW_STRAIGHT,
	DFG_FLOW_HASH,		/* by the value of a key field */
	DFG_FLOW_ROUNDROBIN,
	DFG_FLOW_BROADCAST,	/* every element to every partition */
	DFG_FLOW_GATHER,	/* every partition into one (degree 1) */
};

/*
 * What a component type declares; filled by a struct dfg_flow_types
 * lookup, which gets it zeroed (a lookup written before a field existed
 * leaves it zero: not declared).
 */
struct dfg_flow_typeinfo {
	bool			foldable;	/* has a callable compute */
	bool			interior;	/* can be folded below a root */
	const char *const	*params;	/* NULL-terminated; NULL: any */
	const char *const	*in_ports;	/* NULL-terminated; NULL: numbers */
	const char *const	*out_ports;	/* NULL-terminated; NULL: numbers */
	/* Since LIBDFG_0.7: */
	const struct dfg_param_decl *param_decls; /* see <dfg/component.h>;
						   * NULL: @params, values
						   * not checked */
	bool			ports_declared;	/* the next four are set */
	unsigned int		min_in, max_in;	/* ports a component has */
	unsigned int		min_out, max_out;
};

/*
 * A component type registry. lookup() fills @info for @type and returns
 * 0, or -ENOENT for an unknown type. Without a registry (NULL), every type
 * is foldable and interior and takes any parameter and numbered ports.
 */
struct dfg_flow_types {
	int	(*lookup)(void *arg, const char *type,
			  struct dfg_flow_typeinfo *info);
	void	*arg;
};

struct dfg_flow_param {
	const char	*key;
	const char	*value;
};

/* One port of a component: the flows attached to it, in file order. */
struct dfg_flow_port {
	const char		*name;		/* declared name, or the number */
	unsigned int		nflows;
	const unsigned int	*flows;		/* into dfg_flow.flows */
};

struct dfg_flow_comp {
	unsigned int		index;		/* in dfg_flow.comps */
	const char		*name;		/* the DOT node name */
	const char		*type;
	unsigned int		degree;		/* 1 = serial */
	unsigned int		phase;
	bool			foldable;
	bool			interior;	/* false: role=root */
	const char		*pin;		/* manual set, or NULL */
	unsigned int		line;		/* first mention in the file */
	unsigned int		nparams;	/* in file order */
	const struct dfg_flow_param *params;
	unsigned int		nin, nout;	/* ports */
	const struct dfg_flow_port *in, *out;
	unsigned int		nin_flows, nout_flows;
	const unsigned int	*in_flows;	/* all input flows, file order */
	const unsigned int	*out_flows;	/* all output flows, file order */
};

/* One flow: an edge from an output port to an input port. */
struct dfg_flow_edge {
	unsigned int		index;		/* in dfg_flow.flows */
	unsigned int		src, src_port;	/* component, output port */
	unsigned int		dst, dst_port;	/* component, input port */
	enum dfg_flow_kind	kind;
	const char		*key;		/* hash key, else NULL */
	unsigned int		line;
};

struct dfg_flow {
	const char		*file;		/* as given to the loader */
	const char		*name;		/* the DOT graph name, or "" */
	unsigned int		ncomps, nflows;
	const struct dfg_flow_comp *comps;	/* file order */
	const struct dfg_flow_edge *flows;	/* file order */
	const unsigned int	*topo;		/* ncomps indices, see above */
};

/* One problem found in a graph file. */
struct dfg_flow_error {
	const char	*file;
	unsigned int	line;		/* 0 when not known */
	const char	*object;	/* "node 'a'", "flow 'a' -> 'b'", NULL */
	const char	*attr;		/* the attribute, or NULL */
	const char	*msg;
};

struct dfg_flow_errors {
	unsigned int		n;
	const struct dfg_flow_error *v;
};

/*
 * Reads the DOT file @path (or @len bytes at @text, named @path in
 * messages, for dfg_flow_parse()) and validates it against @types (may be
 * NULL). On success returns 0 and *@fgp. On a graph error returns
 * -EINVAL and, when @errsp is not NULL, *@errsp lists every problem found
 * (free with dfg_flow_errors_free()); other failures: -ENOMEM, or the
 * -errno of opening or reading @path.
 */
int dfg_flow_load(const char *path, const struct dfg_flow_types *types,
		  struct dfg_flow **fgp, struct dfg_flow_errors **errsp);
int dfg_flow_parse(const char *text, size_t len, const char *path,
		   const struct dfg_flow_types *types, struct dfg_flow **fgp,
		   struct dfg_flow_errors **errsp);
void dfg_flow_free(struct dfg_flow *fg);

/*
 * "file:line: object: attribute 'a': message\n" for each error; bytes a
 * terminal would act on (controls, bytes that are not printable UTF-8)
 * are written as \xNN.
 */
int dfg_flow_errors_print(const struct dfg_flow_errors *errs, FILE *f);
void dfg_flow_errors_free(struct dfg_flow_errors *errs);

/* The value of parameter @key of @c, or NULL. */
const char *dfg_flow_param(const struct dfg_flow_comp *c, const char *key);

/* Index of the component named @name, or -ENOENT. */
int dfg_flow_find(const struct dfg_flow *fg, const char *name);

/* "straight", "hash", ...; NULL for a bad value. */
const char *dfg_flow_kind_name(enum dfg_flow_kind kind);

/* Folded plans. */
#define DFG_PLAN_NO_FOLD	(1U << 0)	/* one set per component */
#define DFG_PLAN_ALL		(DFG_PLAN_NO_FOLD)

struct dfg_plan_set {
	unsigned int		index;		/* in dfg_plan.sets */
	const char		*name;		/* "s<index>", or the manual set's
						 * name ("<pin>.<n>" for its n-th
						 * set if it could not be one) */
	unsigned int		degree, phase;	/* of every member */
	bool			foldable;	/* false: one non-foldable member */
	unsigned int		nmembers;
	const unsigned int	*members;	/* topological; [0] is the root */
	unsigned int		nin_flows, nout_flows, ninternal_flows;
	const unsigned int	*in_flows;	/* from other sets, to the root */
	const unsigned int	*out_flows;	/* to other sets */
	const unsigned int	*internal_flows; /* between members */
};

struct dfg_plan_phase {
	unsigned int		phase;
	unsigned int		nsets;
	const unsigned int	*sets;		/* in dfg_plan.sets order */
};

struct dfg_plan {
	const struct dfg_flow	*graph;
	bool			folded;		/* !DFG_PLAN_NO_FOLD */
	unsigned int		nsets;
	const struct dfg_plan_set *sets;	/* flows go to later sets */
	const unsigned int	*set_of;	/* graph->ncomps entries */
	unsigned int		nphases;
	const struct dfg_plan_phase *phases;	/* increasing phase */
	unsigned int		ninstances;	/* sum of the sets' degrees */
};

/*
 * Builds the plan of @fg: procedure 400, or with DFG_PLAN_NO_FOLD one set
 * per component. Returns 0 and *@planp, -EINVAL for a NULL argument or an
 * unknown flag, -ENOMEM.
 */
int dfg_plan_build(const struct dfg_flow *fg, unsigned int flags,
		   struct dfg_plan **planp);
void dfg_plan_free(struct dfg_plan *plan);

/*
 * Writes @plan as a DOT digraph to @f: one cluster per set (label: name,
 * degree, phase), components labelled with their type, flows labelled
 * with their kind; flows crossing sets drawn bold. Returns 0, -EINVAL,
 * -ENOMEM or -EIO.
 */
int dfg_plan_write_dot(const struct dfg_plan *plan, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* _DFG_FLOW_H */
