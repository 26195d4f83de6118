#!/bin/sh
# blast_opts.sh - BLAST+'s single-dash options on `swgpu search`: the ones
# swgpu has print byte for byte what swgpu's own print (-comp_based_stats
# with BLAST's values, -max_hsps N as --max-hsps N), every
# other of BLAST's refused with the exact message (naming swgpu's option
# where there is one), and swgpu's short options, values attached or not,
# as before; column lists separated by commas, and format 10 (CSV).
. "$(dirname "$0")/lib.sh"

Q=$D/cli_q.fasta
DB=$D/cli_db.fasta

# ref ARGS...: `swgpu search ARGS` (swgpu's options) into $T/a
ref() {
    "$SWGPU" search --backend cpu --quiet "$@" > "$T/a" 2> "$T/ea" || fail "swgpu's $*: $(cat "$T/ea")"
}

# same NAME ARGS...: `swgpu search ARGS` succeeds and prints what ref did
same() {
    name=$1; shift
    if ! "$SWGPU" search --backend cpu --quiet "$@" > "$T/b" 2> "$T/eb"; then
        fail "$name: $(cat "$T/eb")"
    elif [ ! -s "$T/a" ]; then
        fail "$name: empty output"
    elif cmp -s "$T/a" "$T/b"; then
        pass
    else
        fail "$name: outputs differ: $(diff "$T/a" "$T/b" | head -n 4)"
    fi
}

ref -q $Q -d $DB -f 6 -e 10 -n 5
same "the BLAST aliases" -query $Q -db $DB -outfmt 6 -evalue 10 -max_target_seqs 5
ref -q $Q -d $DB -t 2 -e 1e-5
same "-num_threads -evalue" -query $Q -db $DB -num_threads 2 -evalue 1e-5
ref -q $Q -d $DB -f "6 qseqid sseqid evalue"
same "-outfmt with columns" -query $Q -db $DB -outfmt "6 qseqid sseqid evalue"
ref -q $Q -d $DB -f "6 qseqid sseqid evalue"
same "comma-separated columns" -query $Q -db $DB -outfmt "6 qseqid,sseqid,evalue"
"$SWGPU" search --backend cpu --quiet -q $Q -d $DB -f "6 qseqid sseqid stitle evalue bitscore" |
    tr '\t' , > "$T/a"
same "-outfmt 10: format 6 with commas" -query $Q -db $DB -outfmt "10 qseqid,sseqid stitle,evalue,bitscore"
ref -q $Q -d $DB -f 7
same "-outfmt 7" -query $Q -db $DB -outfmt 7
ref -q $Q -d $DB
same "-max_hsps 1 -comp_based_stats 0" -query $Q -db $DB -max_hsps 1 -comp_based_stats 0
same "-comp_based_stats F" -query $Q -db $DB -comp_based_stats F
same "-comp_based_stats f" -query $Q -db $DB -comp_based_stats f
ref -q $Q -d $DB --comp-based-stats 1
same "-comp_based_stats 1" -query $Q -db $DB -comp_based_stats 1
ref -q $Q -d $DB --comp-based-stats 2
same "-comp_based_stats 2" -query $Q -db $DB -comp_based_stats 2
same "-comp_based_stats T" -query $Q -db $DB -comp_based_stats T
same "-comp_based_stats t" -query $Q -db $DB -comp_based_stats t
same "-comp_based_stats D" -query $Q -db $DB -comp_based_stats D
ref -q $Q -d $DB --comp-based-stats 3
same "-comp_based_stats 3" -query $Q -db $DB -comp_based_stats 3
ref -q $Q -d $DB --max-hsps 3 -e 1e3
same "-max_hsps 3" -query $Q -db $DB -max_hsps 3 -evalue 1e3
ref -q $Q -d $DB -n 3 --matrix BLOSUM45
same "mixed with swgpu's" -query $Q --db $DB -n 3 --matrix BLOSUM45
ref -q $Q -d $DB -n 3 -e 1 -f 6
same "short options attached" -q$Q -d$DB -n3 -e1 -f6
ref -q $Q -d $DB -v
same "short options bundled" -vq $Q -d $DB
"$SWGPU" search --backend cpu --quiet -query $Q -db $DB -out "$T/o" -outfmt 6 &&
    "$SWGPU" search --backend cpu --quiet -q $Q -d $DB > "$T/r" && cmp -s "$T/o" "$T/r" &&
    pass || fail "-out FILE: differs from stdout"
"$SWGPU" search -help > "$T/h" 2>&1 && grep -q '^usage: swgpu search' "$T/h" && pass || fail "-help"

# refused: exit 1, one exact line
bad "-matrix" "^swgpu: search: -matrix is BLAST's option, not swgpu's: use --matrix \(see swgpu search --help\)\$" \
    search -q $Q -d $DB -matrix BLOSUM62
bad "-gapopen" "^swgpu: search: -gapopen is BLAST's option, not swgpu's: use --gap-open \(see swgpu search --help\)\$" \
    search -q $Q -d $DB -gapopen 11
bad "-gapextend" "^swgpu: search: -gapextend is BLAST's option, not swgpu's: use --gap-extend \(see swgpu search --help\)\$" \
    search -q $Q -d $DB -gapextend 1
bad "-html" "^swgpu: search: -html is BLAST's option; swgpu has none like it \(see swgpu search --help\)\$" \
    search -q $Q -d $DB -html
bad "-task" "^swgpu: search: -task is BLAST's option; swgpu has none like it \(see swgpu search --help\)\$" \
    search -q $Q -d $DB -task blastp
bad "-word_size" "^swgpu: search: -word_size is BLAST's option; swgpu has none like it \(see swgpu search --help\)\$" \
    search -q $Q -d $DB -word_size 3
bad "-max_hsps 0" "^swgpu: --max-hsps 0: must be >= 1 \(alignments per query, subject and strand\)\$" \
    search -q $Q -d $DB -max_hsps 0
bad "-comp_based_stats 4" "^swgpu: search: -comp_based_stats 4: not one of BLAST's values 0 F f 1 2 T t D 3 \(swgpu's --comp-based-stats 0\|1\|2\|3\)\$" \
    search -q $Q -d $DB -comp_based_stats 4
bad "-query, no value" "^swgpu: search: option '-query' needs a value \(see swgpu search --help\)\$" \
    search -d $DB -query
bad "-max_hsps, no value" "^swgpu: search: option '-max_hsps' needs a value \(see swgpu search --help\)\$" \
    search -q $Q -d $DB -max_hsps
bad "unknown word" "^swgpu: search: unknown option '-matrx' \(see swgpu search --help\)\$" \
    search -q $Q -d $DB -matrx BLOSUM62
bad "a value like a BLAST option" "^swgpu: outfmt: unknown format '-outfmt'; expected 0, 5, 6, 7, 10, 15, 17 or pair\$" \
    search -q $Q -d $DB --outfmt -outfmt
bad "a value like a BLAST option, short" "^swgpu: --evalue: '-task' is not a number\$" \
    search -q $Q -d $DB -e -task
bad "unknown short" "^swgpu: search: unknown option '-m' \(see swgpu search --help\)\$" \
    search -q $Q -d $DB -m 3
finish
