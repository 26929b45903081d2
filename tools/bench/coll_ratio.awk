#!/usr/bin/awk -f
# SPDX-License-Identifier: GPL-2.0
# coll_ratio.awk RAW RATIO ALGOS: from coll_raw.csv (rows of coll_bench and
# coll_mpi; impl mpi, dfg, alt, pat) writes
#   RATIO: per collective, N and size, dfg (its default table) against
#          Open MPI: speedup = mpi latency / dfg latency (= busbw ratio);
#   ALGOS: the patent algorithms (pat) against dfg's ring/direct (alt).
BEGIN {
	FS = ","
	raw = ARGV[1]; ratio = ARGV[2]; algos = ARGV[3]
	ARGV[2] = ""; ARGV[3] = ""
	if (ARGC < 4) { print "usage: coll_ratio.awk RAW RATIO ALGOS" > "/dev/stderr"; exit 2 }
}
FNR == 1 { next }
{
	k = $3 SUBSEP $4 SUBSEP $5
	lat[$1, k] = $8; bus[$1, k] = $10; alg[$1, k] = $2; blk[k] = $6
	if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
}
END {
	print "coll,nprocs,bytes,block,dfg_algo,mpi_lat_us,dfg_lat_us,speedup,mpi_busbw_MBps,dfg_busbw_MBps" > ratio
	print "coll,nprocs,bytes,block,pat_algo,alt_algo,pat_lat_us,alt_lat_us,pat_speedup" > algos
	for (i = 1; i <= nk; i++) {
		k = keys[i]; split(k, f, SUBSEP)
		if (("mpi", k) in lat && ("dfg", k) in lat && lat["dfg", k] > 0)
			printf "%s,%s,%s,%s,%s,%s,%s,%.3f,%s,%s\n", f[1], f[2], f[3], blk[k],
				alg["dfg", k], lat["mpi", k], lat["dfg", k],
				lat["mpi", k] / lat["dfg", k], bus["mpi", k], bus["dfg", k] > ratio
		if (("pat", k) in lat && ("alt", k) in lat && lat["pat", k] > 0)
			printf "%s,%s,%s,%s,%s,%s,%s,%s,%.3f\n", f[1], f[2], f[3], blk[k],
				alg["pat", k], alg["alt", k], lat["pat", k], lat["alt", k],
				lat["alt", k] / lat["pat", k] > algos
	}
}
