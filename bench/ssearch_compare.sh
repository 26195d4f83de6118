#!/bin/sh
# ssearch_compare.sh - compare swgpu's top-hit raw scores with ssearch36's.
#
# usage: bench/ssearch_compare.sh [QUERIES [DB]]
#   QUERIES  default /work/shared/data/queries250.fasta
#   DB       default /work/shared/data/uniprot20k.fasta.gz (FASTA, plain or gzip)
# environment:
#   SWGPU    the tool (default build/swgpu, built with make if missing)
#   BACKEND  swgpu --backend (default cpu)
#   TOP      hits compared per query (default 10)
#   NQ       compare only the first NQ queries (default all)
#   THREADS  threads for both programs (default: all cores)
#   KEEP     directory to keep the raw outputs in (default: a temporary one, removed)
#   MATRIX   an NCBI-format matrix file both programs read (default: fasta3's
#            /usr/share/fasta3/data/blosum62.mat), or "builtin": ssearch36's
#            built-in BL62 against swgpu's built-in BLOSUM62
#
# Both programs score with BLOSUM62 and a gap of length k costing 11 + k*1
# (ssearch36 -f -11 -g -1).  The two built-in BLOSUM62 tables agree on the
# 20 amino acids but not on the ambiguity codes: ssearch36's BL62 is the
# original matblas table (B-N 3; X scores 0, -1 or -2 by residue), swgpu's
# comes from NCBI's current files (Debian ncbi-data; B-N 4, X -1 against
# everything, and a J column).  So by default both read the same matrix
# file, which makes every score comparable; MATRIX=builtin shows the small
# differences on targets that contain B, Z or X.
#
# ssearch36 runs without statistics (-z -1), so its hit list is ordered by
# the raw Smith-Waterman score and nothing is dropped by an E-value; swgpu
# runs with an E-value threshold so large that nothing is dropped either.
# For every query the lists of the TOP best raw scores must be identical
# (the sequence ids may differ among equal scores).  Exit status 0 only if
# every query agrees.
set -u
QUERIES=${1:-/work/shared/data/queries250.fasta}
DB=${2:-/work/shared/data/uniprot20k.fasta.gz}
SWGPU=${SWGPU:-build/swgpu}
BACKEND=${BACKEND:-cpu}
TOP=${TOP:-10}
NQ=${NQ:-0}
THREADS=${THREADS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
MATRIX=${MATRIX:-/usr/share/fasta3/data/blosum62.mat}

die() { echo "ssearch_compare: $*" >&2; exit 2; }

[ -r "$QUERIES" ] || die "cannot read queries $QUERIES"
[ -r "$DB" ] || die "cannot read database $DB"
if ! command -v ssearch36 >/dev/null 2>&1; then
    echo "ssearch_compare: installing fasta3 (ssearch36)" >&2
    { apt-get update -qq && apt-get install -y -qq fasta3; } >&2 || die "cannot install fasta3"
fi
if [ "$MATRIX" = builtin ]; then
    ss_mat=BL62 sw_mat=BLOSUM62
else
    [ -r "$MATRIX" ] || die "cannot read matrix file $MATRIX"
    ss_mat=$MATRIX sw_mat=$MATRIX
fi
if ! [ -x "$SWGPU" ]; then
    make -s "$SWGPU" >&2 || die "cannot build $SWGPU"
fi

if [ -n "${KEEP:-}" ]; then
    W=$KEEP; mkdir -p "$W" || die "cannot create $W"
else
    W=$(mktemp -d) || die "mktemp failed"
    trap 'rm -rf "$W"' EXIT INT TERM
fi

# inputs: ssearch36 reads plain FASTA; keep the first NQ queries if asked
if [ "$NQ" -gt 0 ]; then
    awk -v n="$NQ" '/^>/{k++} k<=n' "$QUERIES" > "$W/queries.fa"
else
    cp "$QUERIES" "$W/queries.fa"
fi
case $DB in
*.gz) gzip -dc "$DB" > "$W/db.fa" || die "cannot decompress $DB" ;;
*) cp "$DB" "$W/db.fa" ;;
esac
nq=$(grep -c '^>' "$W/queries.fa")

# ssearch36: -m 9 lists "id ... (len) s-w" per hit, best raw score first
t0=$(date +%s.%N)
ssearch36 -q -p -s "$ss_mat" -f -11 -g -1 -z -1 -b "=$TOP" -d 0 -m 9 -T "$THREADS" \
    "$W/queries.fa" "$W/db.fa" > "$W/ssearch.out" 2> "$W/ssearch.err" ||
    die "ssearch36 failed: $(tail -n 3 "$W/ssearch.err")"
t1=$(date +%s.%N)
awk '
/^ *[0-9]+>>>/ { sub(/^ *[0-9]+>>>/, ""); split($0, w, " "); q = w[1]; inlist = 0; next }
/^The best scores are:/ { inlist = 1; next }
inlist && (/^>>><<</ || /^$/ || /^>>>/) { inlist = 0; next }
inlist {
    line = $0; t = index(line, "\t"); if (t) line = substr(line, 1, t - 1)
    n = split(line, f, " "); split($0, w, " ")
    print q "\t" w[1] "\t" f[n]          # query, subject, s-w raw score
}' "$W/ssearch.out" > "$W/ssearch.tsv"

# swgpu: the same scoring, raw scores, nothing filtered by E-value
t2=$(date +%s.%N)
"$SWGPU" search -q "$W/queries.fa" -d "$W/db.fa" --type prot --matrix "$sw_mat" \
    --gap-open 11 --gap-extend 1 -n "$TOP" --evalue 1e300 --no-align \
    --backend "$BACKEND" --threads "$THREADS" --outfmt '6 qseqid sseqid score' \
    -o "$W/swgpu.tsv" 2> "$W/swgpu.err" || die "swgpu failed: $(tail -n 3 "$W/swgpu.err")"
t3=$(date +%s.%N)

# per query: the TOP scores of each program, compared as lists
awk -F'\t' -v top="$TOP" -v qfile="$W/queries.fa" '
BEGIN {
    while ((getline l < qfile) > 0)
        if (l ~ /^>/) { sub(/^>/, "", l); split(l, w, /[ \t]/); order[++nq] = w[1] }
}
FILENAME ~ /ssearch.tsv$/ { if (++ns[$1] <= top) s[$1] = s[$1] " " $3; next }
{ if (++nw[$1] <= top) g[$1] = g[$1] " " $3 }
END {
    printf "%-34s %8s %8s %4s %4s  %s\n", "query", "ss top", "sw top", "n ss", "n sw", "result"
    same = 0; diff = 0
    for (i = 1; i <= nq; i++) {
        q = order[i]
        split(s[q], a, " "); split(g[q], b, " ")
        ok = (s[q] == g[q])
        if (ok) same++; else diff++
        cs = (ns[q] > top) ? top : ns[q]; cw = (nw[q] > top) ? top : nw[q]
        printf "%-34s %8s %8s %4d %4d  %s\n", q, a[1], b[1], cs, cw, (ok ? "identical" : "DIFFER")
        if (!ok) { printf "    ssearch36:%s\n    swgpu:    %s\n", s[q], g[q] }
    }
    printf "%d queries identical, %d differ\n", same, diff
    exit diff ? 1 : 0
}' "$W/ssearch.tsv" "$W/swgpu.tsv"
rc=$?
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v nq="$nq" -v top="$TOP" -v be="$BACKEND" \
    -v th="$THREADS" 'BEGIN {
    printf "%d queries, top %d scores each; ssearch36 %.1f s, swgpu (backend %s) %.1f s, %s threads\n",
        nq, top, b - a, be, d - c, th }'
echo "matrix: ssearch36 -s $ss_mat, swgpu --matrix $sw_mat; gaps open 11 extend 1"
grep -E '^\[swgpu .*GCUPS' "$W/swgpu.err" | tail -n 1
exit $rc
