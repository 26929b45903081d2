// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Checkpoint buffers: a growing byte buffer components append their state
 * to, and a reader over saved bytes. Integers are little-endian u64,
 * byte strings a u64 length then the bytes. A reader never reads past the
 * end: a short buffer is -EBADMSG, so a truncated or foreign checkpoint
 * file fails the restore instead of feeding a component garbage lengths.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comp_impl.h"

/*
 * struct dfg_ckpt - a writer (owns @buf) or a reader (borrows it)
 * @buf, @len, @cap: the bytes
 * @pos:	reader: next byte to read
 * @reader:	made by dfg_ckpt_open()
 */
struct dfg_ckpt {
	unsigned char	*buf;
	size_t		len, cap, pos;
	bool		reader;
};

int dfg_ckpt_new(struct dfg_ckpt **wp)
{
	struct dfg_ckpt *w;

	if (!wp)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	*wp = w;
	return 0;
}

/* A reader over @len bytes at @data, which must outlive it. */
int dfg_ckpt_open(const void *data, size_t len, struct dfg_ckpt **rp)
{
	struct dfg_ckpt *r;

	if (!rp || (!data && len))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->buf = (unsigned char *)data;
	r->len = len;
	r->reader = true;
	*rp = r;
	return 0;
}

void dfg_ckpt_free(struct dfg_ckpt *k)
{
	if (!k)
		return;
	if (!k->reader)
		free(k->buf);
	free(k);
}

/* A writer's bytes so far (a reader's: all of them) and their number. */
const void *dfg_ckpt_data(const struct dfg_ckpt *k, size_t *len)
{
	if (len)
		*len = k->len;
	return k->buf;
}

int dfg_ckpt_put(struct dfg_ckpt *w, const void *p, size_t len)
{
	if (!w || w->reader || (!p && len))
		return -EINVAL;
	if (len > w->cap - w->len) {
		size_t cap = w->cap ? w->cap : 256;
		unsigned char *buf;

		while (cap - w->len < len) {
			if (cap > SIZE_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		buf = realloc(w->buf, cap);
		if (!buf)
			return -ENOMEM;
		w->buf = buf;
		w->cap = cap;
	}
	if (len)
		memcpy(w->buf + w->len, p, len);
	w->len += len;
	return 0;
}

static void le64(unsigned char *b, __u64 v)
{
	int i;

	for (i = 0; i < 8; i++)
		b[i] = v >> (8 * i);
}

int dfg_ckpt_put_u64(struct dfg_ckpt *w, __u64 v)
{
	unsigned char b[8];

	le64(b, v);
	return dfg_ckpt_put(w, b, sizeof(b));
}

int dfg_ckpt_put_bytes(struct dfg_ckpt *w, const void *p, size_t len)
{
	int ret = dfg_ckpt_put_u64(w, len);

	return ret ? ret : dfg_ckpt_put(w, p, len);
}

int __dfg_ckpt_patch_u64(struct dfg_ckpt *w, size_t at, __u64 v)
{
	if (w->reader || at > w->len || w->len - at < 8)
		return -EINVAL;
	le64(w->buf + at, v);
	return 0;
}

size_t __dfg_ckpt_left(const struct dfg_ckpt *r)
{
	return r->len - r->pos;
}

int dfg_ckpt_get(struct dfg_ckpt *r, void *p, size_t len)
{
	if (!r || !r->reader || (!p && len))
		return -EINVAL;
	if (len > r->len - r->pos)
		return -EBADMSG;
	if (len)
		memcpy(p, r->buf + r->pos, len);
	r->pos += len;
	return 0;
}

int dfg_ckpt_get_u64(struct dfg_ckpt *r, __u64 *v)
{
	unsigned char b[8];
	int i, ret;

	ret = dfg_ckpt_get(r, b, sizeof(b));
	if (ret)
		return ret;
	*v = 0;
	for (i = 0; i < 8; i++)
		*v |= (__u64)b[i] << (8 * i);
	return 0;
}

/* A byte string, pointed to in place (valid as long as the data). */
int dfg_ckpt_get_bytes(struct dfg_ckpt *r, const void **p, size_t *len)
{
	__u64 n;
	int ret;

	if (!p || !len)
		return -EINVAL;
	ret = dfg_ckpt_get_u64(r, &n);
	if (ret)
		return ret;
	if (n > r->len - r->pos)
		return -EBADMSG;
	*p = r->buf + r->pos;
	*len = n;
	r->pos += n;
	return 0;
}
