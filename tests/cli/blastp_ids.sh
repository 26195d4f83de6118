#!/bin/sh
# blastp_ids.sh - the subject columns that blastp 2.12 prints from a BLAST
# database's deflines: ids of -parse_seqids databases (sseqid sacc saccver
# sallseqid stitle salltitles: every Seq-id type, deflines of several
# Seq-ids, a sequence of several deflines), titles without -parse_seqids,
# and taxonomy (staxid(s), ssciname(s), scomname(s), sblastname(s),
# sskingdom(s)) from taxids in the deflines and NCBI's taxdb.bti/.btd found
# as blastp finds them.  Each row of blastp's own output in
# tests/cli/expected/blastp_*.tsv (its pairs of equal raw score; expected/README
# says how they were made) is one of swgpu's rows.
. "$(dirname "$0")/lib.sh"
AD=$(pwd)/$D
B=$AD/blastdb
E=$(pwd)/tests/cli/expected
ID='qseqid sseqid sacc saccver sallseqid stitle salltitles score'
TAX='qseqid sseqid sacc saccver sallseqid staxid ssciname scomname sblastname sskingdom staxids sscinames scomnames sblastnames sskingdoms stitle score'

# rows NAME EXPECTED DB QUERY COLS: run in the current directory; every row
# of EXPECTED (not empty) is one of swgpu's
rows() {
    name=$1 exp=$2 db=$3 q=$4 cols=$5
    if ! "$SWGPU" search --quiet -q "$q" -d "$db" -n 500 -e 1000 -f "6 $cols" > "$T/out" 2> "$T/err"; then
        fail "$name: exit status: $(cat "$T/err")"
        return
    fi
    want=$(grep -c . "$exp")
    got=$(grep -c -F -x -f "$exp" "$T/out")
    [ "$want" -gt 0 ] && [ "$got" -eq "$want" ] && pass ||
        fail "$name: $got of blastp's $want rows in swgpu's output: $(grep -v -F -x -f "$T/out" "$exp" | head -n 2)"
}

mkdir -p "$T/none" "$T/cwd" "$T/beside"
cd "$T/none" || exit 2
unset BLASTDB
rows "ids_v4s" "$E/blastp_ids_v4s.tsv" $B/ids_v4s $B/ids_q.fa "$ID"
rows "seqids_v5s" "$E/blastp_seqids_v5s.tsv" $B/seqids_v5s $B/ids_q.fa "$ID"
rows "multidef_v4s" "$E/blastp_multidef_v4s.tsv" $B/multidef_v4s $B/ids_q.fa "$ID"
rows "prot_v4 (no -parse_seqids)" "$E/blastp_prot_v4.tsv" $B/prot_v4 $B/prot.fa "$ID"

# taxonomy: no taxdb here or in $BLASTDB: names N/A
rows "tax_v5s, no taxdb" "$E/blastp_tax_v5s_none.tsv" $B/tax_v5s $B/ids_q.fa "$TAX"
# beside the database is not where blastp looks
cp $B/tax_v5s.p?? $AD/taxdb/taxdb.bt? "$T/beside/"
rows "tax_v5s, taxdb beside it" "$E/blastp_tax_v5s_none.tsv" "$T/beside/tax_v5s" $B/ids_q.fa "$TAX"
# $BLASTDB (its directories in order, a missing one skipped)
BLASTDB="$T/nowhere:$AD/taxdb" rows "tax_v5s, \$BLASTDB" "$E/blastp_tax_v5s.tsv" $B/tax_v5s $B/ids_q.fa "$TAX"
BLASTDB="$AD/taxdb" rows "tax_v4 (-taxid, no -parse_seqids)" "$E/blastp_tax_v4.tsv" $B/tax_v4 $B/ids_q.fa "$TAX"
# the current directory
cd "$T/cwd" || exit 2
cp $AD/taxdb/taxdb.bt? .
rows "tax_v5s, taxdb in the current directory" "$E/blastp_tax_v5s.tsv" $B/tax_v5s $B/ids_q.fa "$TAX"

# FASTA and makedb databases: no taxonomy (blastp prints N/A for a FASTA
# subject), the id in every id column
TCOLS="6 sseqid sacc staxid staxids sscinames sskingdoms sblastname"
nataxa() { # NAME OUT: OUT has rows, each with sacc = sseqid and N/A taxonomy
    n=$(grep -c . "$2")
    [ "$n" -gt 0 ] && [ "$(awk -F'\t' '$1 == $2 && $3 == "N/A" && $4 == "N/A" && $5 == "N/A" && $6 == "N/A" && $7 == "N/A"' "$2" | grep -c .)" -eq "$n" ] &&
        pass || fail "$1: taxonomy not N/A: $(head -n 2 "$2")"
}
tr '\001' ' ' < $B/tax.fa > "$T/tax.fa" # one defline per record
"$SWGPU" search --quiet -q $B/ids_q.fa -d "$T/tax.fa" -n 500 -f "$TCOLS" > "$T/fa.out" 2>&1
nataxa "FASTA database" "$T/fa.out"
if "$SWGPU" makedb --quiet $B/tax_v5s "$T/tax.swdb" 2> "$T/err"; then
    "$SWGPU" search --quiet -q $B/ids_q.fa -d "$T/tax.swdb" -n 500 -f "$TCOLS" > "$T/mk.out" 2>&1
    nataxa "makedb of tax_v5s" "$T/mk.out"
else
    fail "makedb tax_v5s: $(cat "$T/err")"
fi

# format 7 names the columns as blastp does
"$SWGPU" search --quiet -q $B/ids_q.fa -d $B/tax_v5s -n 1 -f "7 staxid ssciname scomname sblastname sskingdom staxids sscinames scomnames sblastnames sskingdoms" > "$T/f7.out" 2>&1
grep -q -x '# Fields: subject tax id, subject sci name, subject com names, subject blast name, subject super kingdom, subject tax ids, subject sci names, subject com names, subject blast names, subject super kingdoms' "$T/f7.out" &&
    pass || fail "format 7 fields line: $(grep Fields "$T/f7.out")"

# a damaged taxdb is an error naming the file
cd "$T/cwd" || exit 2
printf 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' > taxdb.bti
bad "taxdb.bti bad magic" "^swgpu: output \\(standard output\\): taxonomy database \./taxdb\.bti: not a taxdb index \(bad magic\)\$" \
    search -q $B/ids_q.fa -d $B/tax_v5s -f '6 sscinames'
# ... but only when a column needs the names
"$SWGPU" search --quiet -q $B/ids_q.fa -d $B/tax_v5s -f '6 staxids' > /dev/null 2>&1 && pass ||
    fail "staxids alone read taxdb"
cp $AD/taxdb/taxdb.bti . && rm taxdb.btd
bad "taxdb.btd missing" "^swgpu: output \\(standard output\\): taxonomy database \./taxdb\.bti: no \./taxdb\.btd beside it\$" \
    search -q $B/ids_q.fa -d $B/tax_v5s -f '6 sskingdoms'
cd "$T" || exit 2
finish
