#!/bin/sh
# bad_input.sh - the bad-input table: every row must exit with status 1 and
# print one error line "swgpu: ..." on stderr that matches the row's pattern
# (naming the file, record or option and the problem), print nothing on
# stdout, and never leave an output file behind.
. "$(dirname "$0")/lib.sh"

Q=$D/cli_q.fasta
DB=$D/cli_db.fasta


# --- fixtures made here -------------------------------------------------
: > "$T/empty.fa"
printf 'This is a README, not a sequence file.\nIt has two lines.\n' > "$T/text.txt"
gzip -c $DB > "$T/full.fa.gz"
head -c 300 "$T/full.fa.gz" > "$T/trunc.fa.gz"
printf '>only_header\n\n>another_empty\n' > "$T/allempty.fa"
printf '>e1 no residues\n>q2 serum albumin signal peptide\nMKWVTFISLLFLFSSAYS\n' > "$T/withempty.fa"
printf 'this is not a matrix\n1 2 3\n' > "$T/bad.mat"
printf '>x\nACGT\n' > "$T/one.fa"
mkdir "$T/adir"

# --- files ---------------------------------------------------------------
bad "missing query file" "nope\.fa.*(No such file|not exist|cannot open)" \
    search -q "$T/nope.fa" -d $DB
bad "missing database file" "nodb\.fa.*(No such file|not exist|cannot open)" \
    search -q $Q -d "$T/nodb.fa"
bad "directory as query file" "adir" search -q "$T/adir" -d $DB
if [ "$(id -u)" -eq 0 ]; then
    skip "unreadable file (chmod 000): running as root, which reads it anyway; the directory row covers an unopenable path"
else
    cp $Q "$T/noread.fa" && chmod 000 "$T/noread.fa"
    bad "unreadable query file" "noread\.fa.*(Permission denied|cannot open)" \
        search -q "$T/noread.fa" -d $DB
fi
bad "empty query file" "empty\.fa.*(empty|no sequence)" search -q "$T/empty.fa" -d $DB
bad "empty database file" "empty\.fa.*(empty|no sequence)" search -q $Q -d "$T/empty.fa"
bad "text that is not FASTA" "text\.txt, line 1: expected '>' or '@'" search -q "$T/text.txt" -d $DB
bad "truncated gzip" "trunc\.fa\.gz.*(truncated|gzip|unexpected end)" search -q $Q -d "$T/trunc.fa.gz"
bad "only empty records" "allempty\.fa.*(empty|no sequence)" search -q "$T/allempty.fa" -d $DB
"$SWGPU" makedb $DB "$T/gz.swdb" --quiet && gzip "$T/gz.swdb"
bad "gzipped makedb database" "gz\.swdb\.gz: a gzip-compressed swgpu database \(decompress it first" \
    search -q $Q -d "$T/gz.swdb.gz"
bad "gzipped makedb as queries" "gz\.swdb\.gz: a gzip-compressed swgpu database" \
    search -q "$T/gz.swdb.gz" -d $DB

# a record with an empty sequence: skipped with a warning, counted, exit 0
if "$SWGPU" search -q "$T/withempty.fa" -d $DB --outfmt '6 qseqid sseqid score' > "$T/out" 2> "$T/err"; then
    grep -Eq '^\[swgpu [0-9.]+s\] warning: .*withempty\.fa.*empty sequence.*record 1, id e1' "$T/err" && pass ||
        fail "empty record: no warning naming file and record: $(cat "$T/err")"
    grep -Eq '^\[swgpu [0-9.]+s\] 1 queries ' "$T/err" && pass ||
        fail "empty record: summary does not count 1 query: $(tail -n 1 "$T/err")"
    # q2's best: t5 and t3 tie, the last in the database first (issue 30)
    [ "$(head -n 1 "$T/out")" = "q2	t5	91" ] && pass ||
        fail "empty record: unexpected output $(head -n 1 "$T/out")"
else
    fail "empty record: exit status $? ($(tail -n 1 "$T/err"))"
fi

# --- nothing read silently wrong -----------------------------------------
# data after a gzip member that is not gzip: an error wherever a file is read
cp "$T/full.fa.gz" "$T/junk.fa.gz" && printf 'junk\n' >> "$T/junk.fa.gz"
cp "$T/full.fa.gz" "$T/plus.fa.gz" && printf '>extra\nMKWVTFISLL\n' >> "$T/plus.fa.gz"
gz_end=$(($(wc -c < "$T/full.fa.gz") + 1))
bad "gzip, then junk (-d)" "junk\.fa\.gz: data after the end of the gzip stream is not gzip \(byte $gz_end of the file\)" \
    search -q $Q -d "$T/junk.fa.gz"
bad "gzip, then FASTA (-q)" "plus\.fa\.gz: data after the end of the gzip stream is not gzip \(byte $gz_end " \
    search -q "$T/plus.fa.gz" -d $DB
bad "gzip, then junk (makedb)" "junk\.fa\.gz: data after the end of the gzip stream is not gzip" \
    makedb "$T/junk.fa.gz" "$T/junk.swdb"
[ -e "$T/junk.swdb" ] && fail "a failed makedb left its output" || pass
bad "gzip, then junk (-q -)" "\(standard input\): data after the end of the gzip stream is not gzip" \
    search -q - -d $DB < "$T/junk.fa.gz"
# a gzip PSSM is read by the same reader: junk after it is an error too
gzip -c $D/cli_pssm/q1.pssm > "$T/q1.pssm.gz" && printf 'junk\n' >> "$T/q1.pssm.gz"
bad "gzip PSSM, then junk" "PSSM file .*q1\.pssm\.gz: data after the end of the gzip stream is not gzip" \
    search --pssm "$T/q1.pssm.gz" -d $DB
mkdir -p "$T/z" && gzip -c $D/cli_pssm/q1.pssm > "$T/z/q1.pssm.gz"
"$SWGPU" search --pssm "$T/z/q1.pssm.gz" -d $DB --quiet > "$T/out" 2> "$T/err" &&
    "$SWGPU" search --pssm $D/cli_pssm/q1.pssm -d $DB --quiet > "$T/want" && cmp -s "$T/out" "$T/want" &&
    pass || fail "gzip PSSM: $(cat "$T/err")"
# two gzip members are read; zero padding after the last is ignored with a warning
"$SWGPU" search -q $Q -d $DB --outfmt '6 qseqid sseqid score' > "$T/plain.out" 2> /dev/null
cat "$T/full.fa.gz" > "$T/pad.fa.gz" && head -c 512 /dev/zero >> "$T/pad.fa.gz"
if "$SWGPU" search -q $Q -d "$T/pad.fa.gz" --outfmt '6 qseqid sseqid score' > "$T/out" 2> "$T/err"; then
    grep -Eq "^\[swgpu [0-9.]+s\] warning: file .*pad\.fa\.gz: 512 zero bytes after the end of the gzip stream \(from byte $gz_end\) ignored" "$T/err" &&
        cmp -s "$T/out" "$T/plain.out" && pass || fail "gzip with zero padding: $(cat "$T/err")"
else
    fail "gzip with zero padding: exit status $? ($(tail -n 1 "$T/err"))"
fi
printf '>q2 serum albumin signal peptide\nMKWVTFISLLFLFSSAYS\n;a comment\n@r1 a read\nMKWVTFISLL\n+\nIIIIIIIIII\n' > "$T/mixed.fa"
if "$SWGPU" search -q "$T/mixed.fa" -d $DB --outfmt '6 qseqid qlen' -n 1 > "$T/out" 2> "$T/err"; then
    [ "$(tr '\n\t' ' :' < "$T/out")" = "q2:18 r1:10 " ] && pass ||
        fail "FASTQ after FASTA, ';' comment: $(cat "$T/out")"
else
    fail "FASTQ after FASTA: exit status $? ($(tail -n 1 "$T/err"))"
fi
printf '>a\nMKV\n>  \nMKWVTF\n' > "$T/noid.fa"
bad "empty id" "noid\.fa, line 3: record 2 has an empty id \(nothing after '>'\)" search -q "$T/noid.fa" -d $DB
printf '>a x\rMKWVTFISLL\r>b\rMKV\r' > "$T/cr.fa"
bad "CR-only line ends" "cr\.fa, line 1: CR-only line ends \(a carriage return without a line feed\): convert" \
    search -q "$T/cr.fa" -d $DB
# a database from a pipe (a named one, /dev/stdin) is read once, as a stream
mkfifo "$T/db.fifo"
cat $DB > "$T/db.fifo" &
"$SWGPU" search -q $Q -d "$T/db.fifo" --outfmt '6 qseqid sseqid score' > "$T/out" 2> "$T/err" &&
    cmp -s "$T/out" "$T/plain.out" && pass || fail "database from a FIFO: $(tail -n 1 "$T/err")"
wait
cat $DB | "$SWGPU" search -q $Q -d /dev/stdin --outfmt '6 qseqid sseqid score' > "$T/out" 2> "$T/err" &&
    cmp -s "$T/out" "$T/plain.out" && pass || fail "database from /dev/stdin (a pipe): $(tail -n 1 "$T/err")"
# a makedb database through a pipe: refused, saying why
"$SWGPU" makedb $DB "$T/pipe.swdb" --quiet
cat "$T/pipe.swdb" > "$T/db.fifo" 2> /dev/null &
bad "makedb database from a pipe" "db\.fifo: a swgpu makedb database cannot be read from a stream \(databases are memory-mapped: give its file name\)" \
    search -q $Q -d "$T/db.fifo"
kill $! 2> /dev/null; wait
# an endless stream stops as the reading crosses its limit
mkfifo "$T/endless"
{ printf '>endless\n'; yes ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT | head -c 200000000; } > "$T/endless" 2> /dev/null &
SWGPU_READ_LIMIT=8M
export SWGPU_READ_LIMIT
bad "endless query stream" "endless, line [0-9]+: more than 8388608 bytes held while reading \(the limit for reading: SWGPU_READ_LIMIT" \
    search -q "$T/endless" -d $D/cli_dna_db.fasta
unset SWGPU_READ_LIMIT
kill $! 2> /dev/null; wait
# a PSSM read from an endless stream stops at the same limit (it read up to 1 GiB)
rm -f "$T/endless"; mkfifo "$T/endless"
{ cat $D/cli_pssm/q1.pssm; yes '   9 V 0'; } > "$T/endless" 2> /dev/null &
export SWGPU_READ_LIMIT=1M
bad "endless PSSM stream" "PSSM file .*endless, line [0-9]+: more than 1048576 bytes held while reading" \
    search --pssm "$T/endless" -d $DB
unset SWGPU_READ_LIMIT
kill $! 2> /dev/null; wait

# --- scoring and options ------------------------------------------------
bad "invalid matrix file" "bad\.mat" search -q $Q -d $DB --matrix "$T/bad.mat"
bad "unknown matrix name" "BLOSUM99" search -q $Q -d $DB --matrix BLOSUM99
bad "negative gap open" "gap open -3 is negative" search -q $Q -d $DB --gap-open -3
bad "negative gap extend" "gap extend -1 is negative" search -q $Q -d $DB --gap-extend -1
bad "absurd gap open" "gap open 100000 is absurd" search -q $Q -d $DB --gap-open 100000
bad "free gaps" "both 0" search -q $Q -d $DB --gap-open 0 --gap-extend 0
bad "non-numeric gap" "--gap-open: 'x11' is not an integer" search -q $Q -d $DB --gap-open x11
bad "-n 0" "-n must be >= 1" search -q $Q -d $DB -n 0
bad "-n not a number" "-n: 'ten' is not an integer" search -q $Q -d $DB -n ten
bad "evalue 0" "E-value threshold 0: must be > 0" search -q $Q -d $DB --evalue 0
bad "evalue model" "--evalue-model: 'old' is not spouge or old-fsc" search -q $Q -d $DB --evalue-model old
bad "search --max-memory not a size" "--max-memory: '12Q' is not a size" search -q $Q -d $DB --max-memory 12Q
bad "search --max-memory 0" "--max-memory: '0' is not a size" search -q $Q -d $DB --max-memory 0
bad "search --max-memory below a byte" "--max-memory: '0.4' is not a size" search -q $Q -d $DB --max-memory 0.4
bad "align --max-memory below a byte" "--max-memory: '1e-12G' is not a size" align $Q $DB --max-memory 1e-12G
bad "negative threads" "threads -2" search -q $Q -d $DB --threads -2
bad "unknown option" "unknown option '--frobnicate'" search -q $Q -d $DB --frobnicate
bad "unknown short option" "unknown option '-Z'" search -q $Q -d $DB -Z
bad "option without value" "option '(-n|--top)' needs a value" search -q $Q -d $DB -n
bad "makedb: unknown option" "^swgpu: makedb: unknown option '--frobnicate' \(see swgpu makedb --help\)$" \
    makedb $DB "$T/opt.swdb" --frobnicate
bad "makedb: option without value" "^swgpu: makedb: option '-t' needs a value \(see swgpu makedb --help\)$" \
    makedb $DB "$T/opt.swdb" -t
bad "align: unknown short option" "^swgpu: align: unknown option '-Z' \(see swgpu align --help\)$" \
    align $Q $DB -Z
bad "align: option without value" "^swgpu: align: option '--outfmt' needs a value \(see swgpu align --help\)$" \
    align $Q $DB --outfmt
bad "missing -q" "-q QUERIES \(or --pssm FILE\) is required" search -d $DB
bad "missing -d" "-d DB is required" search -q $Q
bad "missing -q and -d" "-q QUERIES \(or --pssm FILE\) and -d DB are required" search
bad "stray argument" "unexpected argument 'extra'" search -q $Q -d $DB extra
bad "unknown --type" "--type: 'rna' is not prot or dna" search -q $Q -d $DB --type rna
bad "unknown backend" "--backend: 'gpu' is not auto, ref, cpu or cuda" search -q $Q -d $DB --backend gpu
bad "DNA query vs protein db" "cli_dna_q\.fasta are dna .*cli_db\.fasta holds protein" \
    search -q $D/cli_dna_q.fasta -d $DB
bad "protein query vs DNA db" "cli_q\.fasta are protein .*cli_dna_db\.fasta holds dna" \
    search -q $Q -d $D/cli_dna_db.fasta
bad "--match on protein" "--match applies to DNA only" search -q $Q -d $DB --match 1
bad "--matrix on DNA" "--matrix applies to protein only" \
    search -q $D/cli_dna_q.fasta -d $D/cli_dna_db.fasta --matrix BLOSUM62
bad "unknown outfmt column" "bogus" search -q $Q -d $DB --outfmt '6 qseqid bogus'
bad "unknown outfmt" "'?(9|format 9)" search -q $Q -d $DB --outfmt 9

# --backend cuda where the build or machine has none: a clear error
"$SWGPU" search -q $Q -d $DB --backend cuda > "$T/out" 2> "$T/err"
rc=$?
if [ "$rc" -eq 0 ]; then
    skip "--backend cuda: this build and machine have a usable GPU"
else
    bad "--backend cuda without CUDA" "(cuda|CUDA|GPU|device)" search -q $Q -d $DB --backend cuda
fi

# --- output file: never a truncated or partial file ---------------------
printf 'previous content\n' > "$T/keep.tsv"
bad "failing search with -o" "nope\.fa" search -q "$T/nope.fa" -d $DB -o "$T/keep.tsv"
[ "$(cat "$T/keep.tsv")" = "previous content" ] && pass || fail "-o FILE was overwritten by a failed run"
# the cuda error comes from inside the search, after the temporary was created
if "$SWGPU" search -q $Q -d $DB --backend cuda -o "$T/new.tsv" 2> /dev/null; then
    skip "failure after -o opened: --backend cuda works here"
    rm -f "$T/new.tsv"
else
    [ -e "$T/new.tsv" ] && fail "a failed run created -o FILE" || pass
fi
ls "$T" | grep -q '\.tmp\.' && fail "a failed run left a temporary file: $(ls "$T")" || pass
bad "-o into a missing directory" "nodir/out\.tsv.*(No such file|cannot create)" \
    search -q $Q -d $DB -o "$T/nodir/out.tsv"

# a full disk: the write error is reported (exit 1), never a silent success
if [ -c /dev/full ]; then
    bad "-o onto a full device" "output /dev/full: .*No space left" search -q $Q -d $DB -o /dev/full
    "$SWGPU" search -q $Q -d $DB > /dev/full 2> "$T/err"
    rc=$?
    [ "$rc" -eq 1 ] && grep -q '^swgpu: output (standard output): .*No space left' "$T/err" && pass ||
        fail "stdout onto a full device: exit $rc, $(cat "$T/err")"
else
    skip "write errors: no /dev/full"
fi

# --- damaged and foreign databases ---------------------------------------
"$SWGPU" makedb $DB "$T/good.swdb" --quiet
head -c 700 "$T/good.swdb" > "$T/cut.swdb"
cp "$T/good.swdb" "$T/flip.swdb"
printf 'Z' | dd of="$T/flip.swdb" bs=1 seek=600 conv=notrunc 2> /dev/null
printf '\177ELF\002\001\001\000\000\000' > "$T/elf.bin"
bad "truncated makedb database" "cut\.swdb: truncated" search -q $Q -d "$T/cut.swdb"
bad "corrupt makedb database" "flip\.swdb: checksum mismatch" search -q $Q -d "$T/flip.swdb"
bad "binary file as database" "elf\.bin: neither a swgpu database .* nor FASTA" search -q $Q -d "$T/elf.bin"
bad "binary file as queries" "elf\.bin, line 1: expected '>' or '@'" search -q "$T/elf.bin" -d $DB

# --- the tool itself ----------------------------------------------------
bad "no command" "no command given \(commands: search, makedb, align, version, help"
bad "unknown command" "unknown command 'serch' \(commands: search, makedb, align," serch -q $Q -d $DB
bad "makedb missing input" "nope\.fa.*(No such file|not exist|cannot open)" makedb "$T/nope.fa" "$T/x.db"
bad "makedb wrong arguments" "expected IN and OUT" makedb $DB
bad "makedb not FASTA" "text\.txt, line 1: expected '>' or '@'" makedb "$T/text.txt" "$T/x.db"
bad "makedb unknown --type" "--type: 'rna' is not prot or dna" makedb --type rna $DB "$T/x.db"
bad "help for an unknown command" "help: unknown command 'serch'" help serch
bad "--threads not a number" "--threads: 'four' is not an integer" search -q $Q -d $DB -t four
bad "-o is a directory" "output .*adir: is a directory" search -q $Q -d $DB -o "$T/adir"
[ -e "$T/x.db" ] && fail "a failed makedb left its output" || pass

# --- outputs never replace inputs (refused before any work; inputs intact) --
cp $Q "$T/in_q.fa"; cp $DB "$T/in_db.fa"
ln -s "$T/in_q.fa" "$T/q_symlink.fa"; ln "$T/in_db.fa" "$T/db_hardlink.fa"
"$SWGPU" makedb "$T/in_db.fa" "$T/in_db.swdb" --quiet
cp "$T/in_db.swdb" "$T/in_db.swdb.orig"
bad "-o is the query file" 'same file as the query file' search -q "$T/in_q.fa" -d "$T/in_db.fa" -o "$T/in_q.fa"
bad "-o is the database" 'same file as the database' search -q "$T/in_q.fa" -d "$T/in_db.fa" -o "$T/in_db.fa"
bad "-o links to the query" 'q_symlink.fa is the same file as the query file' search -q "$T/in_q.fa" -d "$T/in_db.fa" -o "$T/q_symlink.fa"
bad "-o hard link to the db" 'db_hardlink.fa is the same file as the database' search -q "$T/in_q.fa" -d "$T/in_db.fa" -o "$T/db_hardlink.fa"
bad "-o is the makedb database" 'same file as the database' search -q "$T/in_q.fa" -d "$T/in_db.swdb" -o "$T/in_db.swdb"
bad "makedb OUT is IN" 'OUT .* is the same file as the input' makedb "$T/in_db.fa" "$T/in_db.fa"
bad "makedb OUT is IN (makedb)" 'OUT .* is the same file as the input' makedb "$T/in_db.swdb" "$T/in_db.swdb"
bad "align -o is an input" 'same file as the sequence file B' align "$T/in_q.fa" "$T/in_db.fa" -o "$T/in_db.fa"
bad "align --plot is an input" '--plot .* same file as the sequence file A' align "$T/in_q.fa" "$T/in_db.fa" --plot "$T/in_q.fa"
bad "align -o and --plot equal" '-o and --plot are both' align "$T/in_q.fa" "$T/in_db.fa" -o "$T/a.out" --plot "$T/a.out"
if cmp -s $Q "$T/in_q.fa" && cmp -s $DB "$T/in_db.fa" && cmp -s "$T/in_db.swdb" "$T/in_db.swdb.orig" &&
    [ -L "$T/q_symlink.fa" ] && [ ! -e "$T/a.out" ]; then pass; else fail "an input was changed"; fi

# --- BLAST databases (copies of tests/data/blastdb, damaged here) ---------
B=$D/blastdb
PQ=$B/prot.fa
for x in pin psq phr; do
    cp $B/prot_v4.$x "$T/bl.$x"; cp $B/prot_v4.$x "$T/blt.$x"; cp $B/prot_v4.$x "$T/blv.$x"
    cp $B/prot_v4.$x "$T/blh.$x"; cp $B/prot_mv.00.$x "$T/mv.00.$x"
done
cp $B/prot_v4.psq "$T/blt.psq.orig"
head -c $(($(wc -c < "$T/blt.psq.orig") - 5)) "$T/blt.psq.orig" > "$T/blt.psq"
printf '\000\000\000\006' | dd of="$T/blv.pin" bs=1 conv=notrunc 2>/dev/null
head -c 1000 $B/prot_v4.phr > "$T/blh.phr"
rm "$T/bl.psq"
printf 'DBLIST mv.00 gone\n' > "$T/blgone.pal"
printf 'DBLIST mv.00\nGILIST some.gil\n' > "$T/blgi.pal"
printf 'DBLIST mv.00\n' > "$T/mv.pal"
bad "BLAST db: truncated .psq" "blt\.psq, OID 12: sequence offsets .* outside the file" \
    search -q $PQ -d "$T/blt"
bad "BLAST db: version 6" "blv\.pin: format version 6" search -q $PQ -d "$T/blv"
bad "BLAST db: truncated .phr" "blh\.phr, OID [0-9]+: header offsets" search -q $PQ -d "$T/blh"
bad "BLAST db: no .psq" "bl\.psq: No such file" search -q $PQ -d "$T/bl"
bad "BLAST db: alias lists a missing volume" "gone\.pin: No such file" search -q $PQ -d "$T/blgone"
bad "BLAST db: alias with a GILIST" "blgi\.pal, line 2: GILIST .*not supported" search -q $PQ -d "$T/blgi"
bad "BLAST db: protein db, --type dna" "holds protein sequences, dna was asked for" \
    search -q $B/nuc.fa -d $B/prot_v5 --type dna
bad "BLAST db as queries: damaged" "blv\.pin: format version 6" search -q "$T/blv" -d $PQ
bad "makedb OUT is a BLAST db file" "OUT .*mv\.00\.psq is a file of the BLAST database" \
    makedb "$T/mv" "$T/mv.00.psq"
bad "-o is a BLAST db file" "-o .*mv\.pal is a file of the BLAST database" \
    search -q $PQ -d "$T/mv" -o "$T/mv.pal"
cmp -s "$T/mv.00.psq" $B/prot_mv.00.psq && pass || fail "a BLAST database file was changed"

# --- PSSM queries, iterated searches, standard input ----------------------
P=$D/cli_pssm
# bad_in FILE NAME PATTERN ARGS...: bad, with standard input read from FILE
bad_in() {
    f=$1; shift
    bad "$@" < "$f"
}
printf 'not a PSSM\n' > "$T/bad.pssm"
bad "--pssm: missing file" "nope\.pssm.*(No such file|cannot open)" search --pssm "$T/nope.pssm" -d $DB
bad "--pssm: not a PSSM" "bad\.pssm: no header line of column letters" search --pssm "$T/bad.pssm" -d $DB
head -n 10 $P/q1.pssm > "$T/cut.pssm"
bad "--pssm: cut at a row" "cut\.pssm: the file ends after position 7 without the blank line that ends the matrix" \
    search --pssm "$T/cut.pssm" -d $DB
bad "--pssm with -q" "-q and --pssm cannot be combined" search -q $Q --pssm $P/q1.pssm -d $DB
bad "--pssm -" "--pssm -: a PSSM cannot be read from standard input" search --pssm - -d $DB
bad "--pssm with a DNA database" "PSSMs but the database .*cli_dna_db\.fasta holds dna" \
    search --pssm $P/q1.pssm -d $D/cli_dna_db.fasta
bad "--pssm with --type dna" "PSSM queries take protein only" search --pssm $P/q1.pssm -d $DB --type dna
bad "--pssm with --match" "--match applies to DNA only" search --pssm $P/q1.pssm -d $DB --match 1
bad "neither -q nor --pssm" "-q QUERIES \(or --pssm FILE\) is required" search -d $DB
bad "--iterations 0" "--iterations 0: must be >= 1" search -q $Q -d $DB --iterations 0
bad "--iterations not a number" "--iterations: 'two' is not an integer" search -q $Q -d $DB --iterations two
bad "--inclusion-evalue 0" "--inclusion-evalue 0: must be > 0" search -q $Q -d $DB --inclusion-evalue 0
bad "--report bad" "--report: 'every' is not last or all" search -q $Q -d $DB --report every
bad "--out-pssm not a directory" "--out-pssm .*text\.txt: not a directory" \
    search -q $Q -d $DB --out-pssm "$T/text.txt"
bad "--iterations with DNA" "take protein queries; .*cli_dna_q\.fasta holds dna" \
    search -q $D/cli_dna_q.fasta -d $D/cli_dna_db.fasta --iterations 2
bad "-d -" "-d -: the database cannot be read from standard input" search -q $Q -d -
bad_in "$T/empty.fa" "-q - empty" "\(standard input\): empty file" search -q - -d $DB
bad_in "$T/text.txt" "-q - not FASTA" "\(standard input\), line 1: expected '>' or '@'" search -q - -d $DB
bad_in "$T/in_db.swdb" "-q - makedb database" \
    "\(standard input\): a swgpu makedb database cannot be read from a stream" search -q - -d $DB
bad_in $B/prot_v4.pin "-q - BLAST database file" \
    "\(standard input\): a BLAST database file cannot be read from a stream" search -q - -d $DB
bad_in "$T/in_q.fa" "-o is standard input's file" \
    "-o .*in_q\.fa is the same file as the query file \(standard input\)" \
    search -q - -d $DB -o "$T/in_q.fa"
cmp -s "$T/in_q.fa" $Q && pass || fail "the file on standard input was changed"
bad_in "$T/in_q.fa" "align: A and B both -" "align: A and B cannot both be standard input" align - -
mkdir "$T/pdir" && cp $P/q1.pssm "$T/pdir/q1.pssm"
bad "--out-pssm over a --pssm input" "--out-pssm .*q1\.pssm is the same file as the PSSM file" \
    search --pssm "$T/pdir/q1.pssm" -d $DB --out-pssm "$T/pdir"

finish
