/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dfg_tcp_wire.h - what dfg_tcp.ko's modules say to each other over TCP
 * (kmod/tcp/dfg_tcp.c), little-endian. Also included by its selftest
 * (selftests/prefetch/tcp_hostile.c), which plays a bad client.
 *
 * The server speaks first: one struct dfg_tcp_hello, either what it serves
 * (@status 0) or a refusal, after which it closes. Then the client sends
 * struct dfg_tcp_req headers, as many as it likes without waiting, and the
 * server answers each, in the order asked, with a struct dfg_tcp_resp
 * followed by @len bytes of its partition image from @off. A request that
 * is not one (magic, zero length, beyond the image) ends the connection.
 */
#ifndef _DFG_KMOD_TCP_WIRE_H
#define _DFG_KMOD_TCP_WIRE_H

#include <linux/types.h>

#define DFG_TCP_MAGIC_HELLO	0x54474644U	/* "DFGT" */
#define DFG_TCP_MAGIC_REQ	0x51474644U	/* "DFGQ" */
#define DFG_TCP_MAGIC_RESP	0x52474644U	/* "DFGR" */
#define DFG_TCP_VERSION		1

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
	__le32	len;
	__le64	tag;
	__le64	off;
};

struct dfg_tcp_resp {
	__le32	magic;
	__le32	status;		/* 0: @len bytes follow */
	__le64	tag;
	__le32	len;
	__le32	pad;
};

#endif /* _DFG_KMOD_TCP_WIRE_H */
