#!/bin/sh
# blastdb.sh - BLAST databases on the command line: `swgpu search -d PREFIX`
# prints byte for byte what `-d` the FASTA file it was built from prints
# (versions 4 and 5, with and without -parse_seqids, several volumes, a
# nested alias, protein and DNA, every output format), but for the columns
# blastp prints from a database's deflines: saccver of a -parse_seqids
# database is the accession (sp|P69905|HBA_HUMAN: P69905, as the FASTA
# reference is rewritten here), and stitle is left out (blastp_ids.sh
# checks it and the other id columns against blastp's rows); a BLAST database
# serves as the queries too, `swgpu makedb PREFIX OUT` converts one, and
# `swgpu align` reads one, and names are looked for in $BLASTDB as BLAST+
# does.  The fixtures are tests/data/blastdb (no BLAST
# needed here).
. "$(dirname "$0")/lib.sh"
B=$D/blastdb
COLS='6 qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore score qlen slen nident gaps cigar'

# search NAME OUT ARGS...: run a search that must succeed
search() {
    name=$1 out=$2; shift 2
    if ! "$SWGPU" search --backend cpu --quiet "$@" > "$out" 2> "$T/err"; then
        fail "$name: exit status $?: $(cat "$T/err")"
        return 1
    fi
}

# same NAME A B: files A and B are identical and A is not empty
same() {
    if [ ! -s "$2" ]; then
        fail "$1: empty output"
    elif cmp -s "$2" "$3"; then
        pass
    else
        fail "$1: output differs from the FASTA's: $(diff "$2" "$3" | head -n 4)"
    fi
}

# the reference outputs: the FASTA files as databases
for fmt in 6 "$COLS" 7 pair; do
    tag=$(echo "$fmt" | cut -c1-4 | tr -d ' ')
    search "prot.fa $tag" "$T/ref_prot_$tag" -q $B/prot.fa -d $B/prot.fa -f "$fmt" -n 20 || true
    search "nuc.fa $tag" "$T/ref_nuc_$tag" -q $B/nuc.fa -d $B/nuc.fa -f "$fmt" -n 20 || true
done

# the name of the database appears in formats 7 and pair: compare without it
nodb() { grep -v -e '^# Database: ' -e '^Database: ' "$1" > "$1.nodb"; }

# REF TAG: the FASTA's output REF as a -parse_seqids database's (into
# REF.s): format 6 and 7 rows' second column (saccver) is a UniProt id's
# accession
acc() {
    case $2 in
    6 | 7) awk -F'\t' -v OFS='\t' '!/^#/ && $2 ~ /^(sp|tr)\|/ { split($2, a, "|"); $2 = a[2] } { print }' \
        "$1" > "$1.s" ;;
    *) cp "$1" "$1.s" ;;
    esac
}

for db in prot_v4 prot_v5 prot_v4s prot_v5s prot_mv prot_v5s.pin prot_mv.pal; do
    for fmt in 6 "$COLS" 7 pair; do
        tag=$(echo "$fmt" | cut -c1-4 | tr -d ' ')
        search "$db $tag" "$T/out" -q $B/prot.fa -d $B/$db -f "$fmt" -n 20 || continue
        r=$T/ref_prot_$tag
        case $db in *s | *s.pin) acc "$r" "$tag"; r=$r.s ;; esac
        case $tag in
        7 | pair) nodb "$T/out"; nodb "$r"; same "-d $db -f $tag" "$T/out.nodb" "$r.nodb" ;;
        *) same "-d $db -f $tag" "$T/out" "$r" ;;
        esac
    done
done
for db in nuc_v4 nuc_v5 nuc_v4s nuc_v5s nuc_mv nuc_v4.nin; do
    for fmt in 6 "$COLS" 7 pair; do
        tag=$(echo "$fmt" | cut -c1-4 | tr -d ' ')
        search "$db $tag" "$T/out" -q $B/nuc.fa -d $B/$db -f "$fmt" -n 20 || continue
        case $tag in
        7 | pair) nodb "$T/out"; nodb "$T/ref_nuc_$tag"; same "-d $db -f $tag" "$T/out.nodb" "$T/ref_nuc_$tag.nodb" ;;
        *) same "-d $db -f $tag" "$T/out" "$T/ref_nuc_$tag" ;;
        esac
    done
done

# a nested alias (prot_mv's volumes, then prot_v4) searches as prot.fa twice
cat $B/prot.fa $B/prot.fa > "$T/twice.fa"
search "twice.fa" "$T/ref_twice" -q $B/prot.fa -d "$T/twice.fa" -f "$COLS" -n 30 &&
    search "alias/nested" "$T/out" -q $B/prot.fa -d $B/alias/nested -f "$COLS" -n 30 &&
    same "-d alias/nested" "$T/out" "$T/ref_twice"

# a BLAST database as the queries; all against all with --no-self
search "-q prot_v5s" "$T/out" -q $B/prot_v5s -d $B/prot.fa -f "$COLS" -n 20 &&
    same "-q prot_v5s" "$T/out" "$T/ref_prot_6qs"
search "-q nuc_mv" "$T/out" -q $B/nuc_mv -d $B/nuc_v5 -f "$COLS" -n 20 &&
    same "-q nuc_mv -d nuc_v5" "$T/out" "$T/ref_nuc_6qs"
search "no-self fasta" "$T/ref_self" -q $B/prot.fa -d $B/prot.fa --no-self &&
    search "no-self blast" "$T/out" -q $B/prot_v4 -d $B/prot_v4 --no-self &&
    same "-q prot_v4 -d prot_v4 --no-self" "$T/out" "$T/ref_self"

# makedb from a BLAST database
for db in prot_v5s nuc_mv; do
    if "$SWGPU" makedb --quiet $B/$db "$T/$db.swdb" 2> "$T/err"; then
        case $db in prot*) q=$B/prot.fa r=$T/ref_prot_6qs ;; *) q=$B/nuc.fa r=$T/ref_nuc_6qs ;; esac
        search "makedb $db" "$T/out" -q $q -d "$T/$db.swdb" -f "$COLS" -n 20 &&
            same "makedb $db, then -d the .swdb" "$T/out" "$r"
    else
        fail "makedb $db: $(cat "$T/err")"
    fi
done
"$SWGPU" makedb $B/prot_v4 "$T/p.swdb" 2> "$T/err"
grep -q 'makedb: wrote .*p\.swdb: 12 protein sequences, 3598 residues, longest 1880 (1 empty records skipped, 1 unknown letters)' "$T/err" &&
    pass || fail "makedb prot_v4 summary: $(cat "$T/err")"

# align reads the first sequence of a BLAST database
"$SWGPU" align --quiet $B/prot.fa $B/prot.fa > "$T/ref_aln" 2>/dev/null
"$SWGPU" align --quiet $B/prot_v5 $B/prot_mv > "$T/out" 2>/dev/null
same "align prot_v5 prot_mv" "$T/out" "$T/ref_aln"

# $BLASTDB: a name that is nothing here is looked for in each of its
# directories in turn (an empty or missing one skipped); one found here wins
AB=$(pwd)/$B
mkdir -p "$T/wd" "$T/bdb1/sub" "$T/bdb2"
cp $B/prot_v4.* "$T/bdb1/" && cp $B/prot_v4.* "$T/bdb1/sub/"
cp $B/nuc.fa "$T/bdb1/mixed" && cp $B/prot.fa "$T/bdb2/mixed" && cp $B/prot.fa "$T/bdb2/protfa"
cp $B/prot.fa "$T/wd/mixed"
export BLASTDB="$T/none::$T/bdb1:$T/bdb2"
cd "$T/wd" || exit 2
for name in prot_v4 sub/prot_v4 protfa mixed; do
    search "\$BLASTDB -d $name" "$T/out" -q $AB/prot.fa -d $name -f "$COLS" -n 20 &&
        same "\$BLASTDB -d $name" "$T/out" "$T/ref_prot_6qs"
done
rm mixed # now bdb1's (DNA) comes before bdb2's
search "\$BLASTDB -d mixed, DNA" "$T/out" -q $AB/nuc.fa -d mixed -f "$COLS" -n 20 &&
    same "\$BLASTDB -d mixed (bdb1's)" "$T/out" "$T/ref_nuc_6qs"
if "$SWGPU" makedb --quiet prot_v4 "$T/bp.swdb" 2> "$T/err"; then
    search "makedb \$BLASTDB" "$T/out" -q $AB/prot.fa -d "$T/bp.swdb" -f "$COLS" -n 20 &&
        same "makedb prot_v4 from \$BLASTDB" "$T/out" "$T/ref_prot_6qs"
else
    fail "makedb prot_v4 from \$BLASTDB: $(cat "$T/err")"
fi
bad "\$BLASTDB, not found" \
    "^swgpu: file nope: No such file or directory, here or in any directory of \\\$BLASTDB \($T/none::$T/bdb1:$T/bdb2\)\$" \
    search -q $AB/prot.fa -d nope
bad "\$BLASTDB, absolute name" "^swgpu: file /nonexistent/prot_v4: No such file or directory\$" \
    search -q $AB/prot.fa -d /nonexistent/prot_v4
unset BLASTDB
bad "no \$BLASTDB" "^swgpu: file prot_v4: No such file or directory\$" search -q $AB/prot.fa -d prot_v4
cd - > /dev/null || exit 2
finish
