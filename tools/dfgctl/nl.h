/* SPDX-License-Identifier: GPL-2.0 */
/* dfgctl: the generic netlink family "dfg" (nl.c), for info and monitor. */
#ifndef _DFGCTL_NL_H
#define _DFGCTL_NL_H

#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include "dfgctl.h"

#define NL_REPLY_TIMEOUT_MS	5000

extern struct nla_policy ctl_nl_policy[DFG_NL_A_MAX + 1];

/* A generic netlink socket and the id of family "dfg". */
struct nl_ctx {
	struct nl_sock	*sk;
	int		family;
};

/* Socket and family id, SO_RCVTIMEO @rcv_timeout_ms (0: none); EXIT_*. */
int ctl_nl_open(struct nl_ctx *ctx, int rcv_timeout_ms);
void ctl_nl_close(struct nl_ctx *ctx);

/* @err is a negative libnl error (NLE_*); returns EXIT_ERR. */
int ctl_fail_nl(const char *what, int err);

#endif /* _DFGCTL_NL_H */
