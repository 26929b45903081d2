/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dfg_tcp_wire.h - what dfg_tcp.ko's modules say to each other over TCP
 * (kmod/tcp/dfg_tcp.c), little-endian. Also included by its selftest
 * (selftests/prefetch/pf_test.c), which plays bad clients and a peer
 * that dies.
 *
 * The server speaks first: one struct dfg_tcp_hello, either what it serves
 * (@status 0) or a refusal, after which it closes. Then the client sends
 * requests, as many as it likes without waiting: a struct dfg_tcp_req
 * followed by @count struct dfg_tcp_ext, the (offset, length) list of
 * one batch of reads (1..DFG_TCP_LIST_MAX of them). The server answers
 * each request, in the order asked, with a struct dfg_tcp_resp followed
 * by the @bytes bytes of its partition image that the list names, back to
 * back in the list's order. A request that is not one (magic, a count of
 * 0 or over DFG_TCP_LIST_MAX, a zero length, an extent beyond the image)
 * ends the connection; nothing of it is answered.
 */
#ifndef _DFG_KMOD_TCP_WIRE_H
#define _DFG_KMOD_TCP_WIRE_H

#include <linux/types.h>

#define DFG_TCP_MAGIC_HELLO	0x54474644U	/* "DFGT" */
#define DFG_TCP_MAGIC_REQ	0x51474644U	/* "DFGQ" */
#define DFG_TCP_MAGIC_RESP	0x52474644U	/* "DFGR" */
#define DFG_TCP_VERSION		2	/* 2: a request is a list */
#define DFG_TCP_LIST_MAX	256	/* extents per request */

/* dfg_tcp_hello.status */
#define DFG_TCP_SERVING		0
#define DFG_TCP_NOTHING		1	/* no partition loaded */
#define DFG_TCP_BUSY		2	/* at dfg_tcp.max_conns */

struct dfg_tcp_hello {
	__le32	magic;
	__le32	version;
	__le32	status;
	__le32	feat_bytes;
	__le64	node_first;
	__le64	node_count;
	__le64	row_off;
	__le64	col_off;
	__le64	col_count;
	__le64	feat_off;
	__le64	image_bytes;
	__le64	part_set;
};

struct dfg_tcp_req {
	__le32	magic;
	__le32	count;		/* struct dfg_tcp_ext that follow */
	__le64	tag;
};

struct dfg_tcp_ext {
	__le64	off;
	__le32	len;
	__le32	pad;		/* zero */
};

struct dfg_tcp_resp {
	__le32	magic;
	__le32	status;		/* 0: @bytes bytes follow */
	__le64	tag;
	__le32	count;		/* the request's */
	__le32	pad;
	__le64	bytes;		/* the sum of the request's lengths */
};

#endif /* _DFG_KMOD_TCP_WIRE_H */
