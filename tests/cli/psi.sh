#!/bin/sh
# psi.sh - PSSM queries (--pssm), iterated searches (--iterations, --out-pssm,
# --report) and standard input (-q -, align -, a reader that stops early).
#
#   SWGPU=build/swgpu sh tests/cli/psi.sh
#   UPDATE=1 SWGPU=build/swgpu sh tests/cli/psi.sh   rewrite the expected files
#
# The expected files are tests/cli/expected/psi_*; tests/cli/expected/README
# says how they were checked.
. "$(dirname "$0")/lib.sh"

Q=$D/cli_q.fasta
DB=$D/cli_db.fasta
P=$D/cli_pssm   # PSSMs of BLOSUM62's rows for the records of cli_q.fasta

# golden NAME ARGS...: stdout of `swgpu ARGS` equals $E/NAME, exit 0
golden() {
    name=$1; shift
    if ! "$SWGPU" "$@" > "$T/$name" 2> "$T/$name.err"; then
        fail "$name: exit $? ($(tail -n 1 "$T/$name.err"))"
    elif [ -n "${UPDATE:-}" ]; then
        cp "$T/$name" "$E/$name" && pass
    elif cmp -s "$T/$name" "$E/$name"; then
        pass
    else
        fail "$name: output differs from $E/$name:"
        diff "$E/$name" "$T/$name" | head -n 20
    fi
}

# same NAME FILE1 FILE2: the two files are identical
same() {
    if cmp -s "$2" "$3"; then pass; else fail "$1: $2 and $3 differ"; diff "$2" "$3" | head -n 10; fi
}

# one record of cli_q.fasta
record() { awk -v id=">$1" '$1 == id { p = 1; print; next } /^>/ { p = 0 } p' $Q; }

# --- a PSSM of BLOSUM62's rows is the plain query --------------------------
COLS='6 sseqid score qstart qend sstart send cigar nident mismatch positive gaps'
for b in ref cpu; do
    for q in q1 q2 q3; do
        record $q > "$T/$q.fa"
        "$SWGPU" search -q "$T/$q.fa" -d $DB -e 1000 --backend $b --quiet -f "$COLS" > "$T/plain" &&
            "$SWGPU" search --pssm $P/$q.pssm -d $DB -e 1000 --backend $b --quiet -f "$COLS" \
                > "$T/pssm" && [ -s "$T/plain" ] && same "BLOSUM62 rows of $q ($b)" "$T/plain" "$T/pssm" ||
            fail "BLOSUM62 rows of $q ($b): a search failed"
    done
done
golden psi_pssm.out search --pssm $P/q1.pssm --pssm $P/q2.pssm --pssm $P/q3.pssm -d $DB --quiet \
    --outfmt '6 qseqid sseqid score evalue bitscore qlen slen pident nident positive cigar'
# psiblast's own PSSM (q104) against subjects with every unusual letter
golden psi_q104_7.out search --pssm $D/q104.pssm -d $D/pssm_subjects.fa --quiet --outfmt 7
golden psi_q104_pair.out search --pssm $D/q104.pssm -d $D/pssm_subjects.fa --quiet -n 2 --outfmt pair

# --- iterations ------------------------------------------------------------
# one round is the plain search, byte for byte
"$SWGPU" search -q $Q -d $DB --quiet > "$T/plain6"
"$SWGPU" search -q $Q -d $DB --iterations 1 --report last --quiet > "$T/iter1"
same "--iterations 1 is the plain search" "$T/plain6" "$T/iter1"
golden psi_iter_all_7.out search -q $Q -d $DB --iterations 3 --report all --outfmt 7 --quiet
golden psi_iter_last.out search -q $Q -d $DB --iterations 3 --quiet \
    --outfmt '6 qseqid sseqid score evalue bitscore'
golden psi_iter_all_pair.out search -q $Q -d $DB --iterations 2 --report all --outfmt pair -n 1 --quiet
# --rank score: the rounds' order (and so which of two near-identical hits a
# PSSM keeps) before BLAST's ranking became the default (issue 30)
golden psi_iter_last_rank_score.out search -q $Q -d $DB --iterations 3 --quiet --rank score \
    --outfmt '6 qseqid sseqid score evalue bitscore'
# --out-pssm: the PSSM of round 1's hits, read back by --pssm, is round 2
mkdir "$T/pssms"
"$SWGPU" search -q $Q -d $DB --out-pssm "$T/pssms" --quiet > "$T/r1" 2> "$T/r1.err" &&
    [ -s "$T/pssms/q1.pssm" ] && [ -s "$T/pssms/q2.pssm" ] && [ -s "$T/pssms/q3.pssm" ] && pass ||
    fail "--out-pssm: $(cat "$T/r1.err")"
same "--out-pssm does not change the output" "$T/plain6" "$T/r1"
[ -z "${UPDATE:-}" ] || cp "$T/pssms/q1.pssm" "$E/psi_q1.pssm"
same "--out-pssm's PSSM of q1" "$E/psi_q1.pssm" "$T/pssms/q1.pssm"
mkdir "$T/pssms_score"
"$SWGPU" search -q $Q -d $DB --out-pssm "$T/pssms_score" --rank score --quiet > /dev/null 2>&1
[ -z "${UPDATE:-}" ] || cp "$T/pssms_score/q1.pssm" "$E/psi_q1_rank_score.pssm"
same "--out-pssm's PSSM of q1, --rank score" "$E/psi_q1_rank_score.pssm" "$T/pssms_score/q1.pssm"
"$SWGPU" search -q $Q -d $DB --iterations 2 --report all --quiet --outfmt 7 |
    awk '/^# Iteration: 2/ { r = 1 } /^# Iteration: 1/ { r = 0 } r && !/^#/' > "$T/round2"
"$SWGPU" search --pssm "$T/pssms/q1.pssm" --pssm "$T/pssms/q2.pssm" --pssm "$T/pssms/q3.pssm" \
    -d $DB --quiet > "$T/viapssm"
[ -s "$T/round2" ] && same "round 2 = --pssm of round 1's PSSMs" "$T/round2" "$T/viapssm" ||
    fail "round 2: no rows"
# a run resumed from the PSSMs goes on as the first would have
"$SWGPU" search --pssm "$T/pssms/q1.pssm" -d $DB --iterations 2 --quiet --outfmt 6 > "$T/resumed"
"$SWGPU" search -q "$T/q1.fa" -d $DB --iterations 3 --quiet --outfmt 6 > "$T/three"
same "--pssm --iterations 2 = round 3 of -q --iterations 3" "$T/three" "$T/resumed"
# --no-align hides the alignments of an iterated search too
"$SWGPU" search -q $Q -d $DB --iterations 2 --no-align --quiet -f '6 sseqid score cigar' > "$T/noal"
grep -q 'N/A$' "$T/noal" && ! grep -q 'M$' "$T/noal" && pass || fail "--iterations 2 --no-align"

# --- standard input ----------------------------------------------------------
for f in 6 7 pair; do
    "$SWGPU" search -q $Q -d $DB --outfmt $f --quiet > "$T/file.$f"
    cat $Q | "$SWGPU" search -q - -d $DB --outfmt $f --quiet > "$T/stdin.$f"
    same "-q - (format $f)" "$T/file.$f" "$T/stdin.$f"
done
gzip -c $Q | "$SWGPU" search -q - -d $DB --quiet > "$T/stdin.gz"
same "-q - gzip" "$T/file.6" "$T/stdin.gz"
"$SWGPU" search -q - -d $DB --quiet < $D/reads.fq > "$T/fq" 2> "$T/fq.err"
[ $? -eq 1 ] && grep -q "dna sequences but the database" "$T/fq.err" && pass ||
    fail "-q - FASTQ: $(cat "$T/fq.err")"
# a reader that stops early: exit 0 or 141 (SIGPIPE), nothing on stderr, no
# file left (in the folder, nor in TMPDIR), queries from a file or a pipe
i=0; while [ $i -lt 3000 ]; do printf '>r%d\nMKWVTFISLLFLFSSAYSRGVFRRDAHKSEVAHRFKDLGE\n' $i; i=$((i + 1)); done > "$T/many.fa"
mkdir "$T/tmpdir"
for src in file pipe; do
    for ign in no yes; do
        ( [ $ign = yes ] && trap '' PIPE
          if [ $src = file ]; then
              { TMPDIR="$T/tmpdir" "$SWGPU" search -q "$T/many.fa" -d $DB -n 6 2> "$T/head.err"
                echo $? > "$T/head.rc"; } | head -n 1 > "$T/head.out"
          else
              cat "$T/many.fa" |
                  { TMPDIR="$T/tmpdir" "$SWGPU" search -q - -d $DB -n 6 2> "$T/head.err"
                    echo $? > "$T/head.rc"; } | head -n 1 > "$T/head.out"
          fi )
        rc=$(cat "$T/head.rc")
        if { [ "$rc" -eq 0 ] || [ "$rc" -eq 141 ]; } && [ ! -s "$T/head.err" ] &&
           [ "$(wc -l < "$T/head.out")" -eq 1 ]; then
            pass
        else
            fail "$src | head -1 (SIGPIPE ignored: $ign): exit $rc, stderr: $(cat "$T/head.err")"
        fi
    done
done
{ ls "$T" | grep -q '\.tmp\.' || [ -n "$(ls -A "$T/tmpdir")" ]; } &&
    fail "a temporary file was left: $(ls "$T" "$T/tmpdir")" || pass
# align: either sequence from standard input
A=$D/long_a.fa
B=$D/long_b.fa
"$SWGPU" align $A $B --quiet > "$T/al.file" 2>&1
cat $A | "$SWGPU" align - $B --quiet > "$T/al.a" 2>&1
cat $B | "$SWGPU" align $A - --quiet > "$T/al.b" 2>&1
[ -s "$T/al.file" ] && same "align - B" "$T/al.file" "$T/al.a" && same "align A -" "$T/al.file" "$T/al.b"

finish
