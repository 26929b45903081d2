/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: the component API, the component registry and plugins.
 *
 * A component is a vertex of a dataflow graph. Its type (struct
 * dfg_comp_type) is a table of callbacks plus metadata; an instance
 * (struct dfg_comp) is one use of a type in a graph, with a name, port
 * counts, parameters and the state its init() made.
 *
 * Work elements (struct dfg_elem) enter an instance through compute() on
 * one of its input ports and leave through dfg_emit() on one of its output
 * ports. dfg_emit() goes through the instance's emit hook, which the
 * executor installs with dfg_comp_set_emit(): inside a folded set the hook
 * calls the downstream instance's compute() with the same element (the
 * data flow is control flow; nothing is copied or queued), across sets it
 * writes the element into a channel. So an element is only valid during
 * the call that hands it over: a component that keeps one (sort, join)
 * copies it, and one that passes an element through unchanged emits the
 * element it was given, which lets the executor forward it without a copy.
 *
 * Roots are instances without inputs. The executor pumps them with
 * dfg_comp_run(), which produces at most a budget of elements and returns
 * the patent's root codes: DFG_KEEP_GOING (call again), DFG_ERROR (the
 * message is in dfg_comp_errmsg()), DFG_REACHED_EOF (no more data: the
 * executor then calls dfg_comp_shutdown() on every instance of the set in
 * topological order, and shutdown() may still emit, e.g. a sort or an
 * aggregate), DFG_GOT_BLIP (a control message is pending in
 * dfg_comp_blip(): the executor calls dfg_comp_process_blip() on every
 * instance in topological order, upstream first, then calls run again).
 *
 * A checkpoint blip asks every instance to save its state: the executor
 * calls dfg_comp_checkpoint() on each instance of a set into one struct
 * dfg_ckpt, writes that to the set's checkpoint file, makes it durable,
 * and only then forwards the blip out of the set. On resume it calls
 * dfg_comp_restore() on each instance after dfg_comp_init() and before
 * anything else; a root then continues after the last element it produced
 * before the checkpoint, a writer truncates its output to what it had
 * written, a sort gets back its buffered elements.
 *
 * Life of an instance: dfg_comp_create(), dfg_comp_init() (checks the
 * ports and parameters against the type, then calls init()), optionally
 * dfg_comp_restore(), then compute()/run()/process_blip()/end_input() any
 * number of times, dfg_comp_shutdown() once, dfg_comp_destroy() (calls
 * fini()). Calls out of order fail with -EINVAL. An instance is not
 * locked: one thread drives it at a time.
 *
 * Errors: functions return 0 or a negative errno value and never change
 * errno. A callback that fails returns a negative errno after recording a
 * message with dfg_comp_error(); the executor prints
 * "<instance name>: <message>". A negative value returned by dfg_emit()
 * means a component downstream failed (its own instance holds the
 * message); the emitting component returns it unchanged.
 *
 * Plugins: a shared object exports DFG_PLUGIN_ENTRY, a function returning
 * a NULL-terminated array of component types; dfg_comp_load() opens it and
 * registers the types, each of which must carry DFG_COMP_ABI_VERSION (or
 * an older version still accepted, see below).
 * The built-in types (see dfg_component(7)) are registered from the start.
 *
 * Declarations: a type declares its ports (@min_in..@max_out) and, from
 * ABI version 2, its parameters (@param_decls: name, kind of value,
 * range or choices, required or default), so that a graph is checked
 * before anything runs, on a machine without the module (dfg plan):
 * dfg_comp_check() and the graph loader of <dfg/flow.h> reject a value
 * that does not parse as its kind and a required parameter left out.
 * A type of ABI version 1, or one without @param_decls, still loads; only
 * the names in @params are checked then (dfg plan warns about it).
 */
#ifndef _DFG_COMPONENT_H
#define _DFG_COMPONENT_H

#include <stdarg.h>
#include <stddef.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Version of struct dfg_comp_type and of the callback contract. 2 added
 * @param_decls; types of version 1 (without it) are still accepted.
 */
#define DFG_COMP_ABI_VERSION	2
#define DFG_COMP_ABI_MIN	1

/* Most input or output ports an instance can have. */
#define DFG_COMP_MAX_PORTS	256

/* Longest message dfg_comp_error() keeps (bigger ones are cut). */
#define DFG_COMP_ERRMSG_MAX	256

/**
 * struct dfg_elem - a work element
 * @data:	the bytes; read-only for the receiver, valid during the call
 * @len:	number of bytes (a line carries no newline)
 * @tag:	free for components and the executor (a partition uses it for
 *		the key's hash; channels carry it in struct dfg_desc)
 */
struct dfg_elem {
	const void	*data;
	size_t		len;
	__u64		tag;
};

/* Root codes of dfg_comp_run(), in the patent's words. */
enum dfg_run_code {
	DFG_KEEP_GOING	= 0,	/* more to come: call run again */
	DFG_ERROR	= 1,	/* failed: see dfg_comp_errmsg() */
	DFG_REACHED_EOF	= 2,	/* no more data: shut the set down */
	DFG_GOT_BLIP	= 3,	/* dfg_comp_blip() is pending: process it */
};

/* struct dfg_blip kinds */
#define DFG_BLIP_CHECKPOINT	1	/* save state (checkpoint @seq) */
#define DFG_BLIP_USER		2	/* a unit-of-work boundary */

/**
 * struct dfg_blip - a control message travelling with the data
 * @kind:	DFG_BLIP_*
 * @seq:	sequence number (checkpoints count up from 1)
 */
struct dfg_blip {
	__u32	kind;
	__u32	pad;
	__u64	seq;
};

/**
 * struct dfg_param - one parameter of an instance, as written in a graph
 * @key:	parameter name; the type lists those it accepts
 * @value:	its value, as text
 */
struct dfg_param {
	const char	*key;
	const char	*value;
};

/* Kinds of parameter values (struct dfg_param_decl.kind). */
enum dfg_param_kind {
	DFG_PARAM_STRING = 1,	/* any text */
	DFG_PARAM_INT,		/* integer (strtoll(3), base 0) in [min, max] */
	DFG_PARAM_UINT,		/* the same, declared with min >= 0 */
	DFG_PARAM_EXPR,		/* an expression, see dfg_component(7) */
	DFG_PARAM_PATH,		/* a file name, not empty ("{}": the instance) */
	DFG_PARAM_ENUM,		/* one of @choices */
	DFG_PARAM_CHAR,		/* one byte, or "tab", "\t" or "space" */
};

/* struct dfg_param_decl.flags */
#define DFG_PARAM_REQUIRED	(1U << 0)	/* no default: must be given */
#define DFG_PARAM_FLAGS_ALL	(DFG_PARAM_REQUIRED)

/**
 * struct dfg_param_decl - a parameter a type takes (ABI version 2)
 * @name:	parameter name, [a-z0-9_]; NULL ends the table
 * @kind:	enum dfg_param_kind
 * @flags:	DFG_PARAM_*
 * @min, @max:	DFG_PARAM_INT and DFG_PARAM_UINT: the accepted range
 * @choices:	DFG_PARAM_ENUM: the accepted values, NULL-terminated
 * @def:	the value taken when it is not given, as text (checked like
 *		a given one); NULL when there is none. For listings: the
 *		component applies it itself
 * @help:	one line for listings; may be NULL
 */
struct dfg_param_decl {
	const char		*name;
	unsigned int		kind;
	unsigned int		flags;
	long long		min, max;
	const char *const	*choices;
	const char		*def;
	const char		*help;
};

/* Opaque: one instance. */
struct dfg_comp;

/* Opaque: a checkpoint buffer, written with dfg_ckpt_put*() and read with
 * dfg_ckpt_get*() (see below). */
struct dfg_ckpt;

/* dfg_comp_type.flags */
#define DFG_COMP_FOLDABLE	(1U << 0)	/* may share a set (callable) */
#define DFG_COMP_PULL		(1U << 1)	/* buffers its input until EOF */
#define DFG_COMP_FLAGS_ALL	(DFG_COMP_FOLDABLE | DFG_COMP_PULL)

/**
 * struct dfg_comp_type - a component type
 * @abi:	DFG_COMP_ABI_VERSION
 * @name:	registry name: [a-z0-9_], 1 to 63 characters
 * @summary:	one line for listings
 * @flags:	DFG_COMP_*
 * @min_in:	fewest input ports; 0 makes a root possible (needs @run)
 * @max_in:	most input ports (<= DFG_COMP_MAX_PORTS)
 * @min_out:	fewest output ports
 * @max_out:	most output ports (<= DFG_COMP_MAX_PORTS)
 * @params:	names of the parameters it accepts, NULL-terminated; any
 *		other name is rejected by dfg_comp_init() and dfg_comp_check().
 *		Ignored when @param_decls is set
 * @init:	make the state from the parameters; store it in *@state.
 *		Optional
 * @fini:	free the state; called by dfg_comp_destroy() after a
 *		successful init, whatever happened since. Optional
 * @compute:	consume one element of input @port; may emit. Required when
 *		@max_in > 0
 * @run:	root pump: produce at most @budget elements, return a
 *		enum dfg_run_code. Required when @min_in == 0
 * @end_input:	input @port will get no more elements (the others may).
 *		Optional; may emit
 * @shutdown:	every input has ended: flush; may emit. Optional
 * @process_blip: a blip passes through; may emit. Optional
 * @checkpoint:	append the state to @w. NULL means nothing to save
 * @restore:	read back what @checkpoint wrote. NULL means nothing to read
 * @param_decls: (ABI version 2) the parameters it accepts, with the kind
 *		of their values, ended by an entry with a NULL name; NULL:
 *		not declared (then @params)
 *
 * Callbacks returning int return 0 (run: a code) or a negative errno, after
 * dfg_comp_error() for a message. A type is never changed once registered.
 */
struct dfg_comp_type {
	unsigned int	abi;
	const char	*name;
	const char	*summary;
	unsigned int	flags;
	unsigned int	min_in, max_in;
	unsigned int	min_out, max_out;
	const char	*const *params;

	int	(*init)(struct dfg_comp *c, void **state);
	void	(*fini)(struct dfg_comp *c);
	int	(*compute)(struct dfg_comp *c, unsigned int port,
			   const struct dfg_elem *e);
	int	(*run)(struct dfg_comp *c, unsigned long budget);
	int	(*end_input)(struct dfg_comp *c, unsigned int port);
	int	(*shutdown)(struct dfg_comp *c);
	int	(*process_blip)(struct dfg_comp *c, const struct dfg_blip *b);
	int	(*checkpoint)(struct dfg_comp *c, struct dfg_ckpt *w);
	int	(*restore)(struct dfg_comp *c, struct dfg_ckpt *r);

	/* ABI version 2 */
	const struct dfg_param_decl	*param_decls;
};

/**
 * struct dfg_comp_attr - how to instantiate a type
 * @name:	instance name, used in messages (copied)
 * @nr_in:	input ports, within the type's [min_in, max_in]
 * @nr_out:	output ports, within the type's [min_out, max_out]
 * @instance:	index of this instance of an N-way component, < @degree
 * @degree:	N of an N-way component; 0 is taken as 1 (serial)
 * @params:	parameters (copied); keys must be distinct
 * @nr_params:	entries of @params
 */
struct dfg_comp_attr {
	const char		*name;
	unsigned int		nr_in;
	unsigned int		nr_out;
	unsigned int		instance;
	unsigned int		degree;
	const struct dfg_param	*params;
	unsigned int		nr_params;
};

/*
 * Emit hook: deliver @e on output @port of instance @c. Returns 0, or the
 * negative errno of the receiver's failure.
 */
typedef int (*dfg_emit_fn)(struct dfg_comp *c, void *cookie,
			   unsigned int port, const struct dfg_elem *e);

/* ---- Registry and plugins ---------------------------------------------- */

/* Symbol a plugin exports: const struct dfg_comp_type *const *fn(void). */
#define DFG_PLUGIN_ENTRY	"dfg_plugin_types"
typedef const struct dfg_comp_type *const *(*dfg_plugin_entry_fn)(void);

int dfg_comp_register(const struct dfg_comp_type *t);
const struct dfg_comp_type *dfg_comp_find(const char *name);
int dfg_comp_list(const struct dfg_comp_type **types, unsigned int max);
int dfg_comp_load(const char *path, char *err, size_t errlen);
const struct dfg_param_decl *dfg_comp_param_decls(const struct dfg_comp_type *t);

/* ---- Instances: the executor's side ------------------------------------ */

int dfg_comp_check(const struct dfg_comp_type *t,
		   const struct dfg_comp_attr *a, char *err, size_t errlen);
int dfg_comp_create(const struct dfg_comp_type *t,
		    const struct dfg_comp_attr *a, struct dfg_comp **cp);
void dfg_comp_set_emit(struct dfg_comp *c, dfg_emit_fn fn, void *cookie);
int dfg_comp_init(struct dfg_comp *c);
int dfg_comp_compute(struct dfg_comp *c, unsigned int port,
		     const struct dfg_elem *e);
int dfg_comp_run(struct dfg_comp *c, unsigned long budget);
int dfg_comp_end_input(struct dfg_comp *c, unsigned int port);
int dfg_comp_shutdown(struct dfg_comp *c);
int dfg_comp_process_blip(struct dfg_comp *c, const struct dfg_blip *b);
int dfg_comp_checkpoint(struct dfg_comp *c, struct dfg_ckpt *w);
int dfg_comp_restore(struct dfg_comp *c, struct dfg_ckpt *r);
void dfg_comp_destroy(struct dfg_comp *c);

/* ---- Instances: the component's side ----------------------------------- */

int dfg_emit(struct dfg_comp *c, unsigned int port, const struct dfg_elem *e);
int dfg_comp_error(struct dfg_comp *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int dfg_comp_set_blip(struct dfg_comp *c, const struct dfg_blip *b);
const struct dfg_blip *dfg_comp_blip(const struct dfg_comp *c);
void *dfg_comp_state(const struct dfg_comp *c);
const char *dfg_comp_name(const struct dfg_comp *c);
const struct dfg_comp_type *dfg_comp_type(const struct dfg_comp *c);
const char *dfg_comp_errmsg(const struct dfg_comp *c);
unsigned int dfg_comp_nr_in(const struct dfg_comp *c);
unsigned int dfg_comp_nr_out(const struct dfg_comp *c);
unsigned int dfg_comp_instance(const struct dfg_comp *c);
unsigned int dfg_comp_degree(const struct dfg_comp *c);
const char *dfg_comp_param(const struct dfg_comp *c, const char *key,
			   const char *def);
int dfg_comp_param_long(struct dfg_comp *c, const char *key, long long def,
			long long min, long long max, long long *out);

/* ---- Checkpoint buffers ------------------------------------------------ */

int dfg_ckpt_new(struct dfg_ckpt **wp);
int dfg_ckpt_open(const void *data, size_t len, struct dfg_ckpt **rp);
void dfg_ckpt_free(struct dfg_ckpt *k);
const void *dfg_ckpt_data(const struct dfg_ckpt *k, size_t *len);
int dfg_ckpt_put(struct dfg_ckpt *w, const void *p, size_t len);
int dfg_ckpt_put_u64(struct dfg_ckpt *w, __u64 v);
int dfg_ckpt_put_bytes(struct dfg_ckpt *w, const void *p, size_t len);
int dfg_ckpt_get(struct dfg_ckpt *r, void *p, size_t len);
int dfg_ckpt_get_u64(struct dfg_ckpt *r, __u64 *v);
int dfg_ckpt_get_bytes(struct dfg_ckpt *r, const void **p, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* _DFG_COMPONENT_H */
