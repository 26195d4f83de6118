#!/bin/sh
# bad_input2.sh - no command loses a file, and unusable options are refused
# early: outputs through symbolic links, FIFOs and devices, full disks,
# interrupted runs, BLAST version 5 database files, --out-pssm names, output
# paths that cannot be written, and option values out of range.  Every
# refused row exits with status 1, prints one error line "swgpu: ..." that
# matches the row's pattern, nothing on stdout, and leaves no file behind.
. "$(dirname "$0")/lib.sh"

Q=$D/cli_q.fasta
DB=$D/cli_db.fasta


# no_tmp WHERE NAME: no temporary file or directory (*.tmp.*) left in WHERE
no_tmp() {
    left=$(find "$1" -name '*.tmp.*' 2>/dev/null)
    [ -z "$left" ] && pass || fail "$2: left $left"
}

# wait_for PID FIND-ARGS...: wait (at most ~20 s) until `find FIND-ARGS`
# names something or PID has ended; 0 when something was found
wait_for() {
    wpid=$1; shift
    n=0
    while [ $n -lt 4000 ]; do
        [ -n "$(find "$@" 2>/dev/null | head -n 1)" ] && return 0
        kill -0 "$wpid" 2>/dev/null || return 1
        sleep 0.005
        n=$((n + 1))
    done
    return 1
}

"$SWGPU" search -q $Q -d $DB --quiet > "$T/ref.tsv"

# --- -o through a symbolic link: the target replaced atomically -----------
mkdir "$T/ln"
printf 'previous\n' > "$T/ln/real.tsv"
ln -s real.tsv "$T/ln/link.tsv"
"$SWGPU" search -q $Q -d $DB -o "$T/ln/link.tsv" --quiet &&
    [ -L "$T/ln/link.tsv" ] && [ "$(readlink "$T/ln/link.tsv")" = real.tsv ] &&
    cmp -s "$T/ref.tsv" "$T/ln/real.tsv" && pass ||
    fail "-o symbolic link: link replaced or target not written"
# a chain of links, the last one dangling: its target is created
ln -s link2.tsv "$T/ln/link1.tsv"; ln -s sub/new.tsv "$T/ln/link2.tsv"; mkdir "$T/ln/sub"
"$SWGPU" search -q $Q -d $DB -o "$T/ln/link1.tsv" --quiet && [ -L "$T/ln/link1.tsv" ] &&
    [ -L "$T/ln/link2.tsv" ] && cmp -s "$T/ref.tsv" "$T/ln/sub/new.tsv" && pass ||
    fail "-o chain of links to a new file"
no_tmp "$T/ln" "-o through links"
# /dev/stdout and /dev/fd/1 name the open standard output: written in place
"$SWGPU" search -q $Q -d $DB -o /dev/stdout --quiet > "$T/so.tsv" && cmp -s "$T/so.tsv" "$T/ref.tsv" &&
    "$SWGPU" search -q $Q -d $DB -o /dev/fd/1 --quiet | cmp -s - "$T/ref.tsv" && pass ||
    fail "-o /dev/stdout or /dev/fd/1"
ln -s loop_b "$T/ln/loop_a"; ln -s loop_a "$T/ln/loop_b"
bad "-o loop of links" "output .*loop_a: too many levels of symbolic links" \
    search -q $Q -d $DB -o "$T/ln/loop_a"

# SIGTERM while the search runs: the target keeps its content, no temporary
awk 'BEGIN { s = ""; for (i = 0; i < 100; i++) s = s "ACDEFGHIKLMNPQRSTVWY"
             for (i = 0; i < 400; i++) { print ">m" i; print substr(s, 1 + i % 20, 1500 + i) } }' \
    > "$T/mid.fa"
"$SWGPU" search -q $Q -d "$T/mid.fa" -o "$T/ln/link.tsv" --quiet --backend ref &
pid=$!
if wait_for $pid "$T/ln" -name 'real.tsv.tmp.*'; then
    cp "$T/ln/real.tsv" "$T/ln/before.tsv"
    kill -TERM $pid
    wait $pid
    cmp -s "$T/ln/real.tsv" "$T/ln/before.tsv" && [ -L "$T/ln/link.tsv" ] && pass ||
        fail "SIGTERM during -o through a link: the target changed"
    no_tmp "$T/ln" "SIGTERM during -o through a link"
else
    wait $pid
    fail "-o through a link: no temporary beside the target while the search ran"
fi

# a full disk behind the link: the error is reported, the target untouched
mkdir "$T/full"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=64k tmpfs "$T/full" 2> /dev/null; then
    printf 'previous\n' > "$T/full/target.tsv"
    dd if=/dev/zero of="$T/full/filler" bs=4k 2> /dev/null
    ln -s "$T/full/target.tsv" "$T/fullink.tsv"
    bad "-o link onto a full disk" "output .*fullink\.tsv: .*No space left" \
        search -q $Q -d $DB -o "$T/fullink.tsv"
    [ "$(cat "$T/full/target.tsv")" = previous ] && pass || fail "full disk: the target changed"
    no_tmp "$T/full" "full disk"
    umount "$T/full"
else
    skip "full disk: cannot mount a small tmpfs (needs root)"
fi

# --- makedb onto a FIFO, a device, a directory: refused -------------------
if mkfifo "$T/fifo" 2> /dev/null; then
    bad "makedb OUT is a FIFO" "makedb: OUT .*fifo: is a FIFO, not a regular file" \
        makedb $DB "$T/fifo"
    [ -p "$T/fifo" ] && pass || fail "makedb replaced a FIFO"
else
    skip "makedb onto a FIFO: mkfifo not available"
fi
# a device node of our own (the null device), never the system's /dev/null:
# a tool that replaced its OUT would replace that
if [ "$(id -u)" -eq 0 ] && mknod -m 666 "$T/nulldev" c 1 3 2> /dev/null; then
    bad "makedb OUT is a device" "makedb: OUT .*nulldev: is a device, not a regular file" \
        makedb $DB "$T/nulldev"
    [ -c "$T/nulldev" ] && pass || fail "makedb replaced a device"
    ln -s "$T/nulldev" "$T/devlink"
    bad "makedb OUT links to a device" "makedb: OUT .*devlink: its target .*nulldev is a device" \
        makedb $DB "$T/devlink"
    [ -c "$T/nulldev" ] && [ -L "$T/devlink" ] && pass || fail "makedb replaced a device or its link"
else
    skip "makedb onto a device: cannot make a device node (needs root)"
fi
mkdir "$T/outdir"
bad "makedb OUT is a directory" "makedb: OUT .*outdir: is a directory" makedb $DB "$T/outdir"
# through a link: the target replaced, the link kept
printf 'old\n' > "$T/real.swdb"; ln -s real.swdb "$T/link.swdb"
"$SWGPU" makedb $DB "$T/link.swdb" --quiet && [ -L "$T/link.swdb" ] &&
    "$SWGPU" search -q $Q -d "$T/real.swdb" --quiet | cmp -s - "$T/ln/real.tsv" && pass ||
    fail "makedb OUT through a symbolic link"
no_tmp "$T" "makedb"

# --- an interrupted makedb leaves no temporary ----------------------------
mkdir "$T/mk"
awk 'BEGIN { s = ""; for (i = 0; i < 1000; i++) s = s "ACDEFGHIKLMNPQRSTVWY"
             for (i = 0; i < 6000; i++) { print ">s" i; print substr(s, 1 + i % 20, 15000 + i) } }' \
    > "$T/big.fa"
# one thread and ~100 MB, so that the signal comes before the end (on two
# threads a 50 MB database was sometimes written before it: exit 0)
for sig in INT TERM HUP; do
    "$SWGPU" makedb -t 1 "$T/big.fa" "$T/mk/big.swdb" --quiet &
    pid=$!
    # the database file being written (its temporary)
    if wait_for $pid "$T/mk" -type f -path "$T/mk/big.swdb.tmp*"; then
        kill -$sig $pid
        wait $pid
        rc=$?
        [ $rc -gt 128 ] && pass || fail "makedb SIG$sig: exit $rc"
        left=$(ls -A "$T/mk")
        [ -z "$left" ] && pass || fail "makedb SIG$sig: left $left"
    else
        wait $pid
        fail "makedb SIG$sig: no temporary seen while writing"
    fi
    rm -rf "$T/mk"/*
done

# --- BLAST version 5 databases: their LMDB files are inputs too ------------
B=$D/blastdb
for x in pin psq phr; do cp $B/prot_v5.$x "$T/v5.$x"; done
for x in pdb pot ptf pto; do printf 'lmdb %s\n' $x > "$T/v5.$x"; cp "$T/v5.$x" "$T/v5.$x.orig"; done
bad "-o is a BLAST v5 .pdb" "-o .*v5\.pdb is a file of the BLAST database .*v5 \(the database\)" \
    search -q $B/prot.fa -d "$T/v5" -o "$T/v5.pdb"
bad "-o is a BLAST v5 .pto" "-o .*v5\.pto is a file of the BLAST database" \
    search -q $B/prot.fa -d "$T/v5" -o "$T/v5.pto"
bad "makedb OUT is a BLAST v5 .pdb" "makedb: OUT .*v5\.pdb is a file of the BLAST database .*v5 \(the input\)" \
    makedb "$T/v5" "$T/v5.pdb"
bad "makedb OUT is a BLAST v5 .pot" "makedb: OUT .*v5\.pot is a file of the BLAST database" \
    makedb "$T/v5" "$T/v5.pot"
bad "makedb OUT is a BLAST v5 .ptf" "makedb: OUT .*v5\.ptf is a file of the BLAST database" \
    makedb "$T/v5" "$T/v5.ptf"
ok=1
for x in pdb pot ptf pto; do cmp -s "$T/v5.$x" "$T/v5.$x.orig" || ok=0; done
[ $ok -eq 1 ] && pass || fail "a BLAST v5 database file was changed"
# an alias file made anew beside an input database would hide it (PREFIX.pal),
# and a file of the database named through one of its files is one too
bad "-o PREFIX.pal of the input" "-o .*v5\.pal is a file of the BLAST database .*v5 \(the database\)" \
    search -q $B/prot.fa -d "$T/v5" -o "$T/v5.pal"
bad "makedb OUT PREFIX.pal of the input" "makedb: OUT .*v5\.pal is a file of the BLAST database" \
    makedb "$T/v5" "$T/v5.pal"
bad "-o a file of the database named as .pin" "-o .*v5\.pdb is a file of the BLAST database .*v5\.pin" \
    search -q $B/prot.fa -d "$T/v5.pin" -o "$T/v5.pdb"
[ ! -e "$T/v5.pal" ] && pass || fail "v5.pal was made"

# --- --out-pssm: safe, unique names; the directory made -------------------
awk '/^>/ { n++ } n == 2 && !/^>/' $Q > "$T/seq2"
for id in 'sp|P1|A' 'sp|P1|A' 'sp_P1_A' '.hidden' 'x/y' 'sp_P1_A_2'; do
    printf '>%s\n' "$id"; cat "$T/seq2"
done > "$T/dup.fa"
if "$SWGPU" search -q "$T/dup.fa" -d $DB --out-pssm "$T/pssm/new" --quiet > /dev/null 2> "$T/err"; then
    got=$(cd "$T/pssm/new" && LC_ALL=C ls -A | tr '\n' ' ')
    [ "$got" = "_hidden.pssm sp_P1_A.pssm sp_P1_A_2.pssm sp_P1_A_2_6.pssm sp_P1_A_3.pssm x_y.pssm " ] &&
        pass || fail "--out-pssm names: $got"
    # each file holds its own query's PSSM: the six are read back as six queries
    "$SWGPU" search --pssm "$T/pssm/new/sp_P1_A.pssm" --pssm "$T/pssm/new/sp_P1_A_2.pssm" \
        --pssm "$T/pssm/new/sp_P1_A_3.pssm" --pssm "$T/pssm/new/_hidden.pssm" \
        --pssm "$T/pssm/new/x_y.pssm" --pssm "$T/pssm/new/sp_P1_A_2_6.pssm" -d $DB --quiet \
        --outfmt '6 qseqid' | sort -u | tr '\n' ' ' > "$T/ids"
    [ "$(cat "$T/ids")" = "_hidden sp_P1_A sp_P1_A_2 sp_P1_A_2_6 sp_P1_A_3 x_y " ] && pass ||
        fail "--out-pssm files read back: $(cat "$T/ids")"
else
    fail "--out-pssm with duplicate ids: $(cat "$T/err")"
fi
no_tmp "$T/pssm" "--out-pssm"
: > "$T/pssmfile"
bad "--out-pssm is a file" "--out-pssm .*pssmfile: not a directory" \
    search -q $Q -d $DB --out-pssm "$T/pssmfile"
bad "--out-pssm under a file" "--out-pssm .*pssmfile/sub: cannot create the directory .*pssmfile/sub: Not a directory" \
    search -q $Q -d $DB --out-pssm "$T/pssmfile/sub"

# --- options refused early --------------------------------------------------
bad "--kernel unknown (auto)" "kernel 'nope': unknown \(the cuda backend's kernels: default, dpx, simt, intra, vector, scan" \
    search -q $Q -d $DB --kernel nope
bad "--kernel unknown (cpu)" "kernel 'nope': unknown" search -q $Q -d $DB --kernel nope --backend cpu
bad "--kernel unknown (ref)" "kernel 'nope': unknown" search -q $Q -d $DB --kernel nope --backend ref
bad "--kernel simt on cpu" "kernel 'simt': backend cpu has no kernels to choose" \
    search -q $Q -d $DB --kernel simt --backend cpu
bad "--kernel simt on ref" "kernel 'simt': backend ref has no kernels to choose" \
    search -q $Q -d $DB --kernel simt --backend ref
"$SWGPU" search -q $Q -d $DB --kernel default --backend cpu --quiet | cmp -s - "$T/ref.tsv" && pass ||
    fail "--kernel default on cpu"

# -e below the smallest double is that double (no hit is that good here)
"$SWGPU" search -q $Q -d $DB -e 1e-400 --quiet > "$T/out" 2> "$T/err" && [ ! -s "$T/out" ] &&
    [ ! -s "$T/err" ] && pass || fail "-e 1e-400: $(cat "$T/err")"
bad "-e overflow" "--evalue: '1e400' is out of range" search -q $Q -d $DB -e 1e400
bad "--inclusion-evalue overflow" "--inclusion-evalue: '1e999' is out of range" \
    search -q $Q -d $DB --inclusion-evalue 1e999
bad "search --max-memory 1K" "--max-memory 1K \(1024 bytes\): at least 1 MiB is needed" \
    search -q $Q -d $DB --max-memory 1K
bad "align --max-memory 1K" "--max-memory 1K \(1024 bytes\): at least 1 MiB is needed" \
    align $D/long_a.fa $D/long_b.fa --max-memory 1K
bad "-o ''" "output '': an empty file name" search -q $Q -d $DB -o ''
long=$(printf '%0250d' 0)
bad "-o name too long for its temporary" "output .*${long}: the name is too long for its temporary file ${long}\.tmp\.[0-9]+ \(at most 255 bytes" \
    search -q $Q -d $DB -o "$T/$long"
bad "makedb OUT name too long" "makedb: OUT .*${long}: the name is too long for its temporary" \
    makedb $DB "$T/$long"

# found by the hostile battery (issue 28's acceptance run)
pq=$(awk '/^>/ { n++ } n == 1' $Q | head -n 2)
printf '%s\n' "$pq" > "$T/pq.fa"
mkdir -p "$T/pd"
bad "--out-pssm file is the -o output" "--out-pssm .*pd: query 1's PSSM .*pd/q1\.pssm is also the output \(-o\)" \
    search -q "$T/pq.fa" -d $DB --iterations 2 --out-pssm "$T/pd" -o "$T/pd/q1.pssm"
[ -z "$(ls -A "$T/pd")" ] && pass || fail "--out-pssm clash left files: $(ls "$T/pd")"
bad "--strand with protein" "--strand applies to DNA searches only; .*cli_q\.fasta holds protein sequences" \
    search -q $Q -d $DB --strand minus
bad "--strand with a PSSM" "--strand applies to DNA searches only; .* holds protein PSSMs" \
    search --pssm $D/cli_pssm/q1.pssm -d $DB --strand plus
bad "--checkpoint-every without --checkpoint" "--checkpoint-every needs --checkpoint FILE" \
    align $D/long_a.fa $D/long_b.fa --checkpoint-every 5
bad "makedb IN - (empty)" "file /dev/stdin: empty file" makedb - "$T/x.swdb" </dev/null
bad "makedb OUT -" "makedb: OUT is '-': a database is written to a file, not to standard output" \
    makedb $DB -
# numbers too large say so (they said "not an integer", "not a size")
bad "-n too large" "-n: '99999999999' is out of range \(-2147483648 to 2147483647\)" \
    search -q $Q -d $DB -n 99999999999
bad "--max-memory too large" "--max-memory: '99999999999999999999' is too large" \
    search -q $Q -d $DB --max-memory 99999999999999999999
bad "--checkpoint-every too large" "--checkpoint-every: '1e300' is too large \(at most 1e9 seconds\)" \
    align $D/long_a.fa $D/long_b.fa --checkpoint "$T/never.ck" --checkpoint-every 1e300
# a FASTA database with a control byte in a header: the reader's message
# naming the line and byte (it said "neither a swgpu database nor FASTA")
printf '>s1 a\001b\nACGTACGTAGCTAGC\n' > "$T/ctl.fa"
bad "-d FASTA with a control byte" "file .*ctl\.fa, line 1: binary data \(byte 0x01\) in header of record 1" \
    search -q $Q -d "$T/ctl.fa"
bad "makedb FASTA with a control byte" "file .*ctl\.fa, line 1: binary data \(byte 0x01\)" \
    makedb "$T/ctl.fa" "$T/ctl.swdb"
# SAM's QNAME holds at most 254 characters: a longer query id is refused
# (the record would not be SAM), before anything is computed
printf '>%s\nACGTACGTAGCTAGCATCGATCGG\n' "$(printf '%0300d' 0)" > "$T/longid.fa"
bad "align SAM, query id over 254 characters" "--outfmt sam: the query's id .* is 300 characters long, more than SAM's QNAME may hold \(254\)" \
    align "$T/longid.fa" $D/long_b.fa --outfmt sam -o "$T/longid.sam"
[ ! -e "$T/longid.sam" ] && pass || fail "SAM with a long id: output left"
# a Unix socket as an input says what it is (it said "No such device or address")
if python3 -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$T/sock" 2> /dev/null; then
    bad "-q is a socket" "file .*sock: is a socket, which cannot be opened for reading" \
        search -q "$T/sock" -d $DB
    bad "-d is a socket" "file .*sock: is a socket" search -q $Q -d "$T/sock"
else
    skip "no python3 to make a Unix socket"
fi
# -o - is standard output, as -q - is standard input (not a file named "-")
(cd "$T" && "$SWGPU" search -q "$OLDPWD/$Q" -d "$OLDPWD/$DB" -o - --quiet > "$T/dash.out") &&
    "$SWGPU" search -q $Q -d $DB --quiet > "$T/dash.want" && cmp -s "$T/dash.out" "$T/dash.want" &&
    [ ! -e "$T/-" ] && pass || fail "search -o -"
(cd "$T" && "$SWGPU" align "$OLDPWD/$D/long_a.fa" "$OLDPWD/$D/long_b.fa" -o - --quiet > "$T/adash.out") &&
    grep -q '^score' "$T/adash.out" && [ ! -e "$T/-" ] && pass || fail "align -o -"

# SWGPU_CPU_ISA has one reading: an unknown name is refused by every command
# that computes, before it computes (the GPU search's alignments and the long
# aligner once took the best set silently, the CPU engine refused it)
for be in cpu ref; do
    SWGPU_CPU_ISA=avx9 bad "SWGPU_CPU_ISA=avx9, search --backend $be" \
        "SWGPU_CPU_ISA=avx9: expected scalar, sse41, avx2 or avx512" search -q $Q -d $DB --backend $be
done
SWGPU_CPU_ISA=avx9 bad "SWGPU_CPU_ISA=avx9, align" "SWGPU_CPU_ISA=avx9: expected scalar, sse41, avx2 or avx512" \
    align $D/long_a.fa $D/long_b.fa
SWGPU_CPU_ISA=scalar "$SWGPU" search -q $Q -d $DB --backend cpu --quiet > "$T/isa.out" &&
    "$SWGPU" search -q $Q -d $DB --backend cpu --quiet | cmp -s - "$T/isa.out" && pass ||
    fail "SWGPU_CPU_ISA=scalar: output differs from the default set's"

# a replaced output keeps the mode of the file it replaces
: > "$T/mode.tsv" && chmod 640 "$T/mode.tsv"
"$SWGPU" search -q $Q -d $DB -o "$T/mode.tsv" --quiet && [ "$(stat -c %a "$T/mode.tsv")" = 640 ] &&
    [ -s "$T/mode.tsv" ] && pass || fail "-o over a mode 640 file: mode $(stat -c %a "$T/mode.tsv")"
: > "$T/mode.swdb" && chmod 604 "$T/mode.swdb"
"$SWGPU" makedb $DB "$T/mode.swdb" --quiet && [ "$(stat -c %a "$T/mode.swdb")" = 604 ] &&
    [ -s "$T/mode.swdb" ] && pass || fail "makedb over a mode 604 file: mode $(stat -c %a "$T/mode.swdb")"

finish
