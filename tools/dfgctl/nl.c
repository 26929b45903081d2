// SPDX-License-Identifier: GPL-2.0
/* dfgctl helpers: the generic netlink family. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "nl.h"

/* @err is a negative libnl error (NLE_*). */
int ctl_fail_nl(const char *what, int err)
{
	return ctl_fail(what, nl_geterror(err), err == -NLE_OBJ_NOTFOUND);
}

struct nla_policy ctl_nl_policy[DFG_NL_A_MAX + 1] = {
	[DFG_NL_A_API_VERSION]	= { .type = NLA_U32 },
	[DFG_NL_A_FEATURES]	= { .type = NLA_U64 },
	[DFG_NL_A_VERSION]	= { .type = NLA_STRING },
	[DFG_NL_A_CLIENTS]	= { .type = NLA_U32 },
	[DFG_NL_A_PARKED]	= { .type = NLA_U32 },
	[DFG_NL_A_EVENT]	= { .type = NLA_U32 },
	[DFG_NL_A_PID]		= { .type = NLA_U32 },
	[DFG_NL_A_CMD]		= { .type = NLA_U32 },
};

void ctl_nl_close(struct nl_ctx *ctx)
{
	nl_socket_free(ctx->sk);
}

int ctl_nl_open(struct nl_ctx *ctx, int rcv_timeout_ms)
{
	struct timeval tv = {
		.tv_sec		= rcv_timeout_ms / 1000,
		.tv_usec	= (rcv_timeout_ms % 1000) * 1000,
	};
	int ret;

	ctx->sk = nl_socket_alloc();
	if (!ctx->sk)
		return ctl_fail_nl("netlink socket", -NLE_NOMEM);
	ret = genl_connect(ctx->sk);
	if (ret < 0) {
		ctl_fail_nl("connect generic netlink", ret);
		goto out_free;
	}
	if (rcv_timeout_ms &&
	    setsockopt(nl_socket_get_fd(ctx->sk), SOL_SOCKET, SO_RCVTIMEO,
		       &tv, sizeof(tv))) {
		ctl_fail_errno("netlink SO_RCVTIMEO", errno);
		goto out_free;
	}
	ret = genl_ctrl_resolve(ctx->sk, DFG_GENL_NAME);
	if (ret < 0) {
		ctl_fail_nl("resolve generic netlink family " DFG_GENL_NAME,
			    ret);
		goto out_free;
	}
	ctx->family = ret;
	return EXIT_OK;

out_free:
	nl_socket_free(ctx->sk);
	return EXIT_ERR;
}
