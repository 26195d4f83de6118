#!/bin/sh
# hsps.sh - `swgpu search --max-hsps N`: the scores of the k best
# non-intersecting alignments equal lalign36's (protein and DNA, per strand;
# the numbers and commands in tests/cli/expected/README); tabular rows,
# qcovhsp and qcovs equal blastp 2.12's own for a pair with several HSPs
# (expected/hsps_blastp_*.tsv); the pairwise view (hsps_pair.out; UPDATE=1
# rewrites it); --max-hsps 1 prints what no option prints; the backends,
# thread counts and PSSM queries agree; the refusals.
. "$(dirname "$0")/lib.sh"

Q=$D/hsps_q.fasta
DB=$D/hsps_db.fasta
DQ=$D/hsps_dna_q.fasta
DDB=$D/hsps_dna_db.fasta
run() { "$SWGPU" search --quiet "$@"; }

# scores NAME WANT ARGS...: the score column of `swgpu search ARGS`
# (-f '6 score'), joined by spaces, is WANT
scores() {
    name=$1 want=$2; shift 2
    got=$(run "$@" -f '6 score' | tr '\n' ' ' | sed 's/ $//')
    if [ "$got" = "$want" ]; then pass; else fail "$name: scores '$got', lalign36's '$want'"; fi
}

# lalign36 -s BL62 -f -11 -g -1 -K 6 -E 1e6 (README)
awk '/^>/{p=($1==">q1")} p' $Q > "$T/q1.fa"
awk '/^>/{p=($1==">r1")} p' $DB > "$T/r1.fa"
awk '/^>/{p=($1==">r2")} p' $DB > "$T/r2.fa"
scores "protein, r1" "199 185 93 24 22 20" -q "$T/q1.fa" -d "$T/r1.fa" --max-hsps 6 -e 1e6
scores "protein, r2" "179 169 25 19 18 17" -q "$T/q1.fa" -d "$T/r2.fa" --max-hsps 6 -e 1e6
scores "protein, q1 t1" "379 19 17 16 16 16 16 16 15 14" -q "$T/q1.fa" \
    -d "$(awk '/^>/{p=($1==">t1")} p' $D/cli_db.fasta > "$T/t1.fa"; echo "$T/t1.fa")" \
    --max-hsps 10 -e 1e6
# DNA, each strand (lalign36 -n -r +2/-3 -f -5 -g -2 -K 6 -E 1e6, -3 and -i)
scores "DNA, plus" "110 55 14 14 14 14" -q $DQ -d $DDB --max-hsps 6 -e 1e6 --strand plus
scores "DNA, minus" "79 70 14 14 12 11" -q $DQ -d $DDB --max-hsps 6 -e 1e6 --strand minus
# both strands: up to N on each, a subject's best first, then by score
scores "DNA, both strands" "110 79 70 55 14 14 14 14 14 14 12 11" -q $DQ -d $DDB \
    --max-hsps 6 -e 1e6
# the default E-value (10) cuts each HSP by its own E-value: the 11 (E 11) goes
scores "DNA, -e 10" "110 79 70 55 14 14 14 14 14 14 12" -q $DQ -d $DDB --max-hsps 6

# blastp 2.12's own rows (README), byte for byte
for n in 6 2; do
    run -q $Q -d $DB --max-hsps $n -e 1e-5 \
        -f '6 qseqid sseqid score qstart qend sstart send evalue bitscore qcovhsp qcovs' \
        > "$T/b$n" 2> "$T/e" || fail "blastp's -max_hsps $n: $(cat "$T/e")"
    if cmp -s "$T/b$n" "$E/hsps_blastp_$n.tsv"; then pass; else
        fail "-max_hsps $n: rows differ from blastp's:"; diff "$E/hsps_blastp_$n.tsv" "$T/b$n"
    fi
done

# q1 against t2 of cli_db.fasta: blastp's 3 HSPs (qcovs 36, their union)
run -q $D/cli_q.fasta -d $D/cli_db.fasta --max-hsps 3 \
    -f '6 qseqid sseqid score qstart qend sstart send evalue bitscore qcovhsp qcovs' |
    grep "^q1	t2	" > "$T/t2"
if cmp -s "$T/t2" "$E/hsps_blastp_t2.tsv"; then pass; else
    fail "q1 t2: rows differ from blastp's:"; diff "$E/hsps_blastp_t2.tsv" "$T/t2"
fi

# the pairwise view and format 7 with a DNA pair (both strands)
run -q $DQ -d $DDB --max-hsps 3 -f pair > "$T/pair" && run -q $Q -d $DB --max-hsps 3 -f 7 >> "$T/pair"
if [ -n "${UPDATE:-}" ]; then cp "$T/pair" "$E/hsps_pair.out"; pass
elif cmp -s "$T/pair" "$E/hsps_pair.out"; then pass
else fail "hsps_pair.out differs:"; diff "$E/hsps_pair.out" "$T/pair" | head -n 20; fi

# --max-hsps 1: what no option prints, in every format
ALL="6 qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore score qlen slen nident gaps cigar sstrand qcovhsp qcovs ppos btop qseq sseq positive"
for f in 6 7 pair "$ALL"; do
    for qd in "$D/cli_q.fasta $D/cli_db.fasta" "$D/cli_dna_q.fasta $D/cli_dna_db.fasta" "$Q $DB"; do
        set -- $qd
        run -q $1 -d $2 -f "$f" > "$T/a"; run -q $1 -d $2 -f "$f" --max-hsps 1 > "$T/b"
        if cmp -s "$T/a" "$T/b"; then pass; else fail "--max-hsps 1, $1 -f '$f' differs"; fi
    done
done

# the same HSPs whatever the backend and the threads; a GPU when there is one
run -q $Q -d $DB --max-hsps 6 -e 100 -f "$ALL" --backend cpu -t 2 > "$T/want"
for b in "--backend ref -t 1" "--backend cpu -t 1" "--backend cpu -t 3"; do
    run -q $Q -d $DB --max-hsps 6 -e 100 -f "$ALL" $b > "$T/got"
    if cmp -s "$T/want" "$T/got"; then pass; else fail "$b differs from --backend cpu -t 2"; fi
done
if run -q $Q -d $DB --max-hsps 6 -e 100 -f "$ALL" --backend cuda > "$T/got" 2> "$T/e"; then
    if cmp -s "$T/want" "$T/got"; then pass; else fail "--backend cuda differs from cpu"; fi
else
    skip "--backend cuda: no GPU here ($(tail -n 1 "$T/e"))"
fi

# PSSM queries of BLOSUM62's rows: the same HSPs as the sequence
run -q $D/cli_q.fasta -d $D/cli_db.fasta --max-hsps 4 -e 1e3 \
    -f '6 sseqid score qstart qend sstart send cigar' > "$T/want"
run -d $D/cli_db.fasta --pssm $D/cli_pssm/q1.pssm --pssm $D/cli_pssm/q2.pssm \
    --pssm $D/cli_pssm/q3.pssm --max-hsps 4 -e 1e3 \
    -f '6 sseqid score qstart qend sstart send cigar' > "$T/got"
if [ -s "$T/want" ] && cmp -s "$T/want" "$T/got"; then pass; else
    fail "--pssm: HSPs differ from the sequences':"; diff "$T/want" "$T/got" | head -n 10
fi

# refusals
bad "--max-hsps 0" "^swgpu: --max-hsps 0: must be >= 1 \(alignments per query, subject and strand\)\$" \
    search -q $Q -d $DB --max-hsps 0
bad "--max-hsps -1" "^swgpu: --max-hsps -1: must be >= 1 \(alignments per query, subject and strand\)\$" \
    search -q $Q -d $DB --max-hsps -1
bad "--max-hsps 2 --comp-based-stats 2" "^swgpu: max HSPs 2: not yet with comp-based-stats 2 \(one alignment per subject under the adjusted matrices\)\$" \
    search -q $Q -d $DB --max-hsps 2 --comp-based-stats 2
bad "--max-hsps x" "^swgpu: --max-hsps: 'x' is not an integer\$" search -q $Q -d $DB --max-hsps x
bad "--max-hsps 2x" "^swgpu: --max-hsps: '2x' is not an integer\$" search -q $Q -d $DB --max-hsps 2x
bad "-max_hsps 1.5" "^swgpu: --max-hsps: '1.5' is not an integer\$" search -q $Q -d $DB -max_hsps 1.5
bad "--max-hsps, --no-align" "^swgpu: search: --max-hsps 2 cannot be combined with --no-align: the further alignments need the first ones\$" \
    search -q $Q -d $DB --max-hsps 2 --no-align
bad "--max-hsps, --iterations" "^swgpu: search: --max-hsps 3 cannot be combined with --iterations: an iterated search reports one alignment per subject \(its PSSMs take every HSP of a subject\)\$" \
    search -q $Q -d $DB --max-hsps 3 --iterations 2
finish
