#!/bin/sh
# fit_dna.sh - the DNA workload whose statistics are fitted per query (its
# scores, +3/-5 with gaps 9/3, have no published parameters), written into
# OUT: ddb.fa, S. aureus N315 in 1 kb pieces (2,815 sequences), and dq.fa,
# 300 pieces of E. coli MG1655 of 200-2,000 bp.  Used by scripts/gpu-check
# shared and scripts/multi-gpu-check fitted.  Exit 1 when DATA lacks the
# genomes (MG1655-K12.fasta.gz, N315.fasta.gz).
#
#   sh bench/fit_dna.sh DATA OUT
set -u
DATA=$1 OUT=$2
[ -f "$DATA/MG1655-K12.fasta.gz" ] && [ -f "$DATA/N315.fasta.gz" ] || exit 1
mkdir -p "$OUT"
seqof() { gzip -dc "$1" | awk '!/^>/ { printf "%s", toupper($0) }'; }
seqof "$DATA/N315.fasta.gz" | awk '{
    for (i = 1; i <= length($0); i += 1000) printf ">n%d\n%s\n", i, substr($0, i, 1000) }' >"$OUT/ddb.fa"
seqof "$DATA/MG1655-K12.fasta.gz" | awk '{
    for (i = 0; i < 300; i++) { len = 200 + (i * 397) % 1801
        printf ">q%d\n%s\n", i, substr($0, (i * 22721) % (length($0) - len) + 1, len) } }' >"$OUT/dq.fa"
