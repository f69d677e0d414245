/* SPDX-License-Identifier: MIT */
/*
 * The record writer encodes events itself (common/record_writer.c, one
 * append per event): its bytes must be exactly msgpack-c's, for integers
 * at every boundary of every encoding and for random ones. Prints the
 * byte counts and "identical", or exits 1.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <msgpack.h>
#include "record_writer.h"
static char out1[1 << 20], out2[1 << 20]; static size_t n1;
static int sink1(void *c, const char *b, size_t l) { (void)c; memcpy(out1 + n1, b, l); n1 += l; return 0; }
int main(void) {
	char buf[65536]; struct kp_writer w; kp_writer_init(&w, buf, sizeof(buf), sink1, NULL);
	msgpack_sbuffer sb; msgpack_sbuffer_init(&sb); msgpack_packer pk; msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	int64_t vals[] = {0,1,31,32,-1,-32,-33,-128,-129,-32768,-32769,-2147483648LL,-2147483649LL,127,128,255,256,65535,65536,4294967295LL,4294967296LL,INT64_MAX,INT64_MIN};
	unsigned nv = sizeof(vals)/sizeof(vals[0]);
	srand(1);
	for (int r = 0; r < 20000; r++) {
		uint64_t a = r < 500 ? (uint64_t)vals[r % nv] : ((uint64_t)rand() << 33) ^ rand();
		uint64_t b = (uint64_t)vals[(r/3) % nv];
		uint32_t nr = (uint32_t)vals[(r/7) % nv];
		int64_t ret = vals[(r/11) % nv], fd = vals[(r/13) % nv]; unsigned kind = r % 5;
		if (r & 1) { kp_rec_event(&w, a, b, nr, ret); msgpack_pack_array(&pk, 4); msgpack_pack_uint64(&pk, a); msgpack_pack_uint64(&pk, b); msgpack_pack_uint32(&pk, nr); msgpack_pack_int64(&pk, ret); }
		else { kp_rec_event_fd(&w, a, b, nr, ret, fd, kind); msgpack_pack_array(&pk, 6); msgpack_pack_uint64(&pk, a); msgpack_pack_uint64(&pk, b); msgpack_pack_uint32(&pk, nr); msgpack_pack_int64(&pk, ret); msgpack_pack_int64(&pk, fd); msgpack_pack_uint32(&pk, kind); }
	}
	kp_writer_flush(&w);
	memcpy(out2, sb.data, sb.size);
	bool same = n1 == sb.size && !memcmp(out1, out2, n1);
	printf("%zu %zu %s\n", n1, sb.size, same ? "identical" : "DIFFER");
	msgpack_sbuffer_destroy(&sb);
	return same ? 0 : 1;
}
