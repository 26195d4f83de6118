#!/bin/sh
# golden.sh - `swgpu search` / `makedb` outputs pinned to expected files.
#
#   SWGPU=build/swgpu sh tests/cli/golden.sh            check
#   UPDATE=1 SWGPU=build/swgpu sh tests/cli/golden.sh   rewrite tests/cli/expected/
#                                                       (then inspect by hand!)
# The fixtures (tests/data/cli_*.fasta) are small on purpose; the expected
# files were checked by hand against independent scores (see
# tests/cli/expected/README).
. "$(dirname "$0")/lib.sh"

# golden NAME ARGS...: stdout of `swgpu ARGS` equals $E/NAME, exit 0
golden() {
    name=$1; shift
    if ! "$SWGPU" "$@" > "$T/$name" 2> "$T/$name.err"; then
        fail "$name: exit $? ($(tail -n 1 "$T/$name.err"))"
        return
    fi
    if [ -n "${UPDATE:-}" ]; then
        cp "$T/$name" "$E/$name"
        pass
    elif cmp -s "$T/$name" "$E/$name"; then
        pass
    else
        fail "$name: output differs from $E/$name:"
        diff "$E/$name" "$T/$name" | head -n 20
    fi
}

Q=$D/cli_q.fasta
DB=$D/cli_db.fasta

golden search_6.out search -q $Q -d $DB --quiet
golden search_7.out search -q $Q -d $DB --outfmt 7 --quiet
# a strict E-value: q3 keeps no hit and is still reported ("# 0 hits found")
golden search_7_evalue.out search -q $Q -d $DB --outfmt 7 --evalue 0.01 --quiet
golden search_pair.out search -q $Q -d $DB --outfmt pair --quiet
golden search_cols.out search -q $Q -d $DB --quiet \
    --outfmt '6 qseqid sseqid score evalue bitscore qlen slen nident gaps cigar'
golden search_noalign.out search -q $Q -d $DB --no-align --quiet \
    --outfmt '6 qseqid sseqid score evalue qstart cigar'
golden search_top1.out search -q $Q -d $DB -n 1 --outfmt '6 qseqid sseqid score' --quiet
# the E-values of BLAST+ with OLD_FSC=1: the outputs of the old default, unchanged
golden search_6_old_fsc.out search -q $Q -d $DB --evalue-model old-fsc --quiet
golden search_pair_old_fsc.out search -q $Q -d $DB --outfmt pair --evalue-model old-fsc --quiet
golden search_pam250.out search -q $Q -d $DB --matrix PAM250 --gap-open 14 --gap-extend 2 \
    --outfmt '6 qseqid sseqid score evalue qstart qend sstart send cigar' --quiet
# a matrix file without published statistics: E-values are approximate
# (warned about), raw scores exact
golden search_matfile.out search -q $Q -d $DB --matrix $D/cli_ident.mat --gap-open 9 \
    --gap-extend 2 --evalue 1e9 --outfmt '6 qseqid sseqid score qstart qend sstart send'
grep -q 'warning: .*cli_ident' "$T/search_matfile.out.err" && pass ||
    fail "matrix file: no statistics warning: $(cat "$T/search_matfile.out.err")"
golden search_dna.out search -q $D/cli_dna_q.fasta -d $D/cli_dna_db.fasta --quiet \
    --outfmt '6 qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore score cigar'
golden search_dna_7.out search -q $D/cli_dna_q.fasta -d $D/cli_dna_db.fasta --outfmt 7 --quiet
# qcovhsp qcovs ppos positive length salltitles sallseqid equal blastp 2.12's
# on the pairs of equal raw score with one HSP (expected/README says how
# blastp_cols.tsv was made): each of its rows is one of swgpu's
"$SWGPU" search -q $Q -d $DB --quiet > "$T/cols_blast.out" \
    --outfmt '6 qseqid sseqid score qcovhsp qcovs ppos positive length salltitles sallseqid'
n=$(grep -c -F -x -f "$E/blastp_cols.tsv" "$T/cols_blast.out")
[ "$n" -eq 5 ] && pass || fail "coverage columns: $n of blastp's 5 rows in swgpu's output"

# --rank score (issue 30): the order before BLAST's ranking became the
# default, pinned to the expected files of that time (score desc, then the
# first in the database: t1 before t4, t3 before t5)
golden search_6_rank_score.out search -q $Q -d $DB --rank score --quiet
golden search_7_evalue_rank_score.out search -q $Q -d $DB --outfmt 7 --evalue 0.01 --rank score \
    --quiet
golden search_pair_rank_score.out search -q $Q -d $DB --outfmt pair --rank score --quiet
golden search_top1_rank_score.out search -q $Q -d $DB -n 1 --outfmt '6 qseqid sseqid score' \
    --rank score --quiet
golden search_6_old_fsc_rank_score.out search -q $Q -d $DB --evalue-model old-fsc --rank score \
    --quiet
golden search_matfile_rank_score.out search -q $Q -d $DB --matrix $D/cli_ident.mat --gap-open 9 \
    --gap-extend 2 --evalue 1e9 --outfmt '6 qseqid sseqid score qstart qend sstart send' \
    --rank score
golden search_dna_rank_score.out search -q $D/cli_dna_q.fasta -d $D/cli_dna_db.fasta --quiet \
    --outfmt '6 qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore score cigar' \
    --rank score
# BLAST's ranking, as blastp 2.12 prints it (tests/data/rank_*.fa: an
# E-value that inverts the scores, equal hits listed from the last in the
# database, E-values below 1e-180 equal; expected/README says how
# blastp_rank.tsv was made): byte for byte
BR='6 qseqid sseqid evalue bitscore score slen'
golden_same() { # NAME FILE ARGS...: swgpu ARGS prints FILE
    name=$1; want=$2; shift 2
    if "$SWGPU" "$@" > "$T/$name" 2> "$T/$name.err" && cmp -s "$T/$name" "$want"; then
        pass
    else
        fail "$name: differs from $want: $(diff "$want" "$T/$name" | head -n 6)"
    fi
}
golden_same "rank evalue" "$E/blastp_rank.tsv" search -q $D/rank_q.fa -d $D/rank_db.fa \
    -e 1e-3 --outfmt "$BR" --quiet
golden_same "rank evalue, -n 1" "$E/blastp_rank_top1.tsv" search -q $D/rank_q.fa \
    -d $D/rank_db.fa -e 1e-3 -n 1 --outfmt "$BR" --quiet
golden_same "rank evalue, -n 3" "$E/blastp_rank_top3.tsv" search -q $D/rank_q.fa \
    -d $D/rank_db.fa -e 1e-3 -n 3 --outfmt "$BR" --quiet
golden rank_score.out search -q $D/rank_q.fa -d $D/rank_db.fa -e 1e-3 --outfmt "$BR" \
    --rank score --quiet
"$SWGPU" search -q $Q -d $DB --rank sideways > /dev/null 2> "$T/rank.err"
[ $? -ne 0 ] && grep -q "rank: 'sideways' is not evalue or score" "$T/rank.err" && pass ||
    fail "--rank sideways: $(cat "$T/rank.err")"

# the same search through a makedb database gives the same output
if "$SWGPU" makedb $DB "$T/cli.db" 2> "$T/makedb.err"; then
    pass
    grep -q 'makedb: wrote .*6 protein sequences' "$T/makedb.err" && pass ||
        fail "makedb summary: $(cat "$T/makedb.err")"
    "$SWGPU" search -q $Q -d "$T/cli.db" --quiet > "$T/viadb.out" 2>&1 &&
        cmp -s "$T/viadb.out" "$E/search_6.out" && pass ||
        fail "search against the makedb file differs from search_6.out"
else
    fail "makedb: $(tail -n 1 "$T/makedb.err")"
fi

# gzip-compressed inputs give the same output
gzip -c $Q > "$T/q.fa.gz" && gzip -c $DB > "$T/db.fa.gz"
"$SWGPU" search -q "$T/q.fa.gz" -d "$T/db.fa.gz" --quiet > "$T/gz.out" 2>&1 &&
    cmp -s "$T/gz.out" "$E/search_6.out" && pass || fail "gzip inputs: output differs"

# every backend this build and machine has gives the same output as ref
for b in ref cpu; do
    "$SWGPU" search -q $Q -d $DB --backend $b --quiet > "$T/b_$b.out" 2>&1 &&
        cmp -s "$T/b_$b.out" "$E/search_6.out" && pass || fail "--backend $b: output differs"
done
# ... and every CPU instruction set this machine runs
for isa in scalar sse41 avx2 avx512; do
    if SWGPU_CPU_ISA=$isa "$SWGPU" search -q $Q -d $DB --backend cpu --quiet > "$T/isa.out" 2> "$T/isa.err"; then
        cmp -s "$T/isa.out" "$E/search_6.out" && pass || fail "SWGPU_CPU_ISA=$isa: output differs"
    else
        skip "SWGPU_CPU_ISA=$isa: $(tail -n 1 "$T/isa.err")"
    fi
done
# thread count does not change the result
"$SWGPU" search -q $Q -d $DB --threads 1 --quiet > "$T/t1.out" 2>&1 &&
    "$SWGPU" search -q $Q -d $DB --threads 3 --quiet > "$T/t3.out" 2>&1 &&
    cmp -s "$T/t1.out" "$T/t3.out" && pass || fail "--threads 1 and 3 differ"

# -o FILE: same bytes as stdout, no temporary left, summary line on stderr
if "$SWGPU" search -q $Q -d $DB -o "$T/out.tsv" 2> "$T/o.err"; then
    cmp -s "$T/out.tsv" "$E/search_6.out" && pass || fail "-o FILE content differs"
    ls "$T" | grep -q 'out\.tsv\.tmp' && fail "-o left a temporary file" || pass
    grep -Eq '^\[swgpu [0-9.]+s\] 3 queries .* vs 6 sequences .*backend [a-z0-9]+.*GCUPS.*peak RSS' \
        "$T/o.err" && pass || fail "summary line: $(cat "$T/o.err")"
else
    fail "-o FILE: $(tail -n 1 "$T/o.err")"
fi
# -o onto something that is not a regular file writes into it, never
# replaces it (renaming over /dev/null would replace the device)
if mkfifo "$T/fifo" 2> /dev/null; then
    cat "$T/fifo" > "$T/from_fifo" &
    "$SWGPU" search -q $Q -d $DB -o "$T/fifo" --quiet 2> "$T/fifo.err"
    rc=$?
    wait
    [ "$rc" -eq 0 ] && [ -p "$T/fifo" ] && cmp -s "$T/from_fifo" "$E/search_6.out" && pass ||
        fail "-o FIFO: exit $rc, $(cat "$T/fifo.err")"
else
    skip "-o FIFO: mkfifo not available"
fi
printf 'old\n' > "$T/real.tsv" && ln -s real.tsv "$T/link.tsv"
"$SWGPU" search -q $Q -d $DB -o "$T/link.tsv" --quiet && [ -L "$T/link.tsv" ] &&
    cmp -s "$T/real.tsv" "$E/search_6.out" && pass || fail "-o symbolic link: link replaced or not written"
# --quiet: nothing on stderr
"$SWGPU" search -q $Q -d $DB --quiet > /dev/null 2> "$T/q.err" && ! [ -s "$T/q.err" ] && pass ||
    fail "--quiet printed: $(cat "$T/q.err")"

# help and version
"$SWGPU" --help > "$T/h.out" 2>&1 && grep -q '^usage: swgpu <command>' "$T/h.out" && pass ||
    fail "swgpu --help"
"$SWGPU" search --help > "$T/sh.out" 2> "$T/sh.err" && ! [ -s "$T/sh.err" ] &&
    grep -q 'a gap of length k costs OPEN + k\*EXTEND' "$T/sh.out" &&
    grep -q 'default BLOSUM62' "$T/sh.out" && grep -q 'default 10)' "$T/sh.out" && pass ||
    fail "swgpu search --help"
"$SWGPU" help makedb > "$T/mh.out" 2>&1 && grep -q '^usage: swgpu makedb' "$T/mh.out" && pass ||
    fail "swgpu help makedb"
"$SWGPU" version > "$T/v.out" 2>&1 && grep -Eq '^swgpu [0-9]+\.[0-9]+\.[0-9]+$' "$T/v.out" && pass ||
    fail "swgpu version: $(cat "$T/v.out")"

# all against all: the same FASTA file, or one makedb file, as queries and
# database; --no-self drops each sequence's own hit and nothing else
"$SWGPU" makedb $DB "$T/ava.swdb" --quiet || fail "makedb for all against all"
"$SWGPU" search -q $DB -d $DB -n 3 --quiet > "$T/ava_all.tsv" || fail "all against all"
"$SWGPU" search -q $DB -d $DB -n 3 --no-self --quiet > "$T/ava_fa.tsv" || fail "all against all --no-self"
"$SWGPU" search -q "$T/ava.swdb" -d "$T/ava.swdb" -n 3 --no-self --quiet > "$T/ava_db.tsv" ||
    fail "all against all --no-self (makedb file as both)"
if cmp -s "$T/ava_fa.tsv" "$T/ava_db.tsv"; then pass; else fail "--no-self: FASTA and makedb outputs differ"; fi
n_self=$(awk -F'\t' '$1 == $2' "$T/ava_fa.tsv" | wc -l)
n_self_all=$(awk -F'\t' '$1 == $2' "$T/ava_all.tsv" | wc -l)
n_q=$(grep -c '^>' $DB)
if [ "$n_self" -eq 0 ] && [ "$n_self_all" -eq "$n_q" ]; then pass; else
    fail "self hits: $n_self with --no-self (want 0), $n_self_all without (want $n_q)"; fi
# without the self hits, each query keeps its other hits in the same order
awk -F'\t' '$1 != $2' "$T/ava_all.tsv" | cut -f1,2,12 > "$T/ava_rest.txt"
cut -f1,2,12 "$T/ava_fa.tsv" | grep -F -x -f "$T/ava_rest.txt" > "$T/ava_common.txt"
if cmp -s "$T/ava_rest.txt" "$T/ava_common.txt"; then pass; else fail "--no-self changed the other hits"; fi

# --threads above the core count: clamped with a warning, same output
"$SWGPU" search -q $Q -d $DB -t 100000 > "$T/many_threads.out" 2> "$T/many_threads.err" || fail "-t 100000 failed"
if cmp -s "$T/many_threads.out" "$E/search_6.out" &&
    grep -q 'warning: --threads 100000 is more than the [0-9]* cores: using' "$T/many_threads.err"; then
    pass
else
    fail "-t 100000: $(head -n 1 "$T/many_threads.err")"
fi

finish
