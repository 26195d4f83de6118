#!/bin/sh
# strand_bench.sh - the cost of searching DNA on both strands: the same
# queries and database with --strand plus and --strand both (the default),
# wall and scan time, GCUPS, and the ratio; the two runs' plus-strand hits
# are checked to be a subset of the both-strand run's scores.
#
#   sh bench/strand_bench.sh [DATA] [SWGPU] [OUT] [BACKEND]
#
# Workload (deterministic, no random numbers): the database is E. coli DH1,
# S. aureus COL and N315 cut into 5 kbp pieces (about 2,050 sequences, 10.3
# Mbp); the queries are NQ pieces of E. coli MG1655 (default 200) of 200 to
# 2,000 bp, every other one reverse-complemented, so that about half of the
# best hits lie on the database's minus strand.  DNA +2/-3, gaps 5+2k, top
# 10 hits with alignments.  DATA holds MG1655-K12.fasta.gz, DH1.fasta.gz,
# COL.fasta.gz and N315.fasta.gz (default .data, else ../shared/data).
set -u
DATA=${1:-.data}
[ -f "$DATA/MG1655-K12.fasta.gz" ] || DATA=../shared/data
SW=${2:-build/swgpu}
OUT=${3:-strand-bench.out}
BACKEND=${4:-auto}
NQ=${NQ:-200}
mkdir -p "$OUT"
seqof() { gzip -dc "$1" | awk '!/^>/ { printf "%s", toupper($0) }'; }
if [ ! -f "$OUT/db.fa" ]; then
    for g in DH1 COL N315; do
        seqof "$DATA/$g.fasta.gz" | awk -v g=$g '{
            for (i = 1; i <= length($0); i += 5000)
                printf ">%s_%d %s %d-%d\n%s\n", g, (i - 1) / 5000 + 1, g, i, i + 4999, substr($0, i, 5000)
        }'
    done >"$OUT/db.fa"
fi
if [ ! -f "$OUT/q.fa" ]; then
    seqof "$DATA/MG1655-K12.fasta.gz" | awk -v nq="$NQ" 'BEGIN { c["A"] = "T"; c["C"] = "G"; c["G"] = "C"; c["T"] = "A" } {
        L = length($0)
        for (i = 0; i < nq; i++) {
            len = 200 + (i * 397) % 1801
            p = (i * 22721 + 1000) % (L - len) + 1
            s = substr($0, p, len)
            if (i % 2) { r = ""; for (k = len; k >= 1; k--) { x = substr(s, k, 1); r = r (x in c ? c[x] : "N") }; s = r }
            printf ">q%d MG1655 %d-%d %s\n%s\n", i + 1, p, p + len - 1, i % 2 ? "rc" : "fwd", s
        }
    }' >"$OUT/q.fa"
fi
res=$(awk '!/^>/ { n += length($0) } END { print n }' "$OUT/db.fa")
qres=$(awk '!/^>/ { n += length($0) } END { print n }' "$OUT/q.fa")
printf '%-6s %-7s %8s %8s %9s %9s\n' strand backend wall scan GCUPS hits >"$OUT/table.txt"
for st in plus both; do
    $SW search -q "$OUT/q.fa" -d "$OUT/db.fa" --type dna --backend "$BACKEND" --strand $st -n 10 \
        --outfmt '6 qseqid sseqid score sstrand' -o "$OUT/$st.tsv" 2>"$OUT/$st.err" ||
        { echo "strand $st failed: $(tail -1 "$OUT/$st.err")"; exit 1; }
    grep wall "$OUT/$st.err" | tail -1 | awk -v st=$st -v be="$BACKEND" -v n="$(wc -l <"$OUT/$st.tsv")" '{
        for (i = 1; i <= NF; i++) {
            if ($i == "scan") scan = $(i + 1)
            if ($i == "wall") wall = $(i + 1)
            if ($i == "backend") be = $(i + 1)
            if ($i ~ /^\(/ && $(i + 1) ~ /^GCUPS/) g = substr($i, 2)
        }
        sub(/,$/, "", be)
        printf "%-6s %-7s %8s %8s %9s %9s\n", st, be, wall, scan, g, n }' >>"$OUT/table.txt"
done
# every plus-strand hit's score is at most the both-strand search's for the pair
awk -F'\t' 'FILENAME ~ /both/ { b[$1 "\t" $2] = $3; next } ($1 "\t" $2) in b && $3 > b[$1 "\t" $2] { bad++ }
    END { print (bad ? bad " plus hits score above the both-strand run" : "plus hits <= both: ok") }' \
    "$OUT/both.tsv" "$OUT/plus.tsv" >>"$OUT/table.txt"
awk -F'\t' '$4 == "minus" { m++ } END { print "both: " NR " hits, " m + 0 " on the minus strand" }' \
    "$OUT/both.tsv" >>"$OUT/table.txt"
echo "$NQ queries ($qres bp) x $(grep -c '^>' "$OUT/db.fa") sequences ($res bp)" >>"$OUT/table.txt"
awk 'NR == 2 { pw = $3; ps = $4 } NR == 3 { printf "both / plus: wall %.2fx, scan %.2fx\n", $3 / pw, $4 / ps }' \
    "$OUT/table.txt" >>"$OUT/table.txt"
cat "$OUT/table.txt"
