#!/bin/sh
# blast_formats.sh - formats 0, 5, 15 and 17 read by real consumers: format
# 5 by Biopython's NCBIXML and 15 by Python's json (BLAST's BlastOutput2
# layout), their hits equal format 6's (ids, E-values, bit and raw scores,
# coordinates, identities, gaps, aligned strings; protein, and DNA with
# minus-strand hits); format 17 by samtools (view and flagstat: one record a
# hit, flag 16 for the minus strand).  Golden copies of each on the cli_*
# fixtures.
. "$(dirname "$0")/lib.sh"

COLS='6 qseqid sseqid evalue bitscore score qstart qend sstart send nident gaps qseq sseq'
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# golden NAME ARGS...: stdout of `swgpu search ARGS` equals $E/NAME
golden() {
    name=$1; shift
    if ! "$SWGPU" search --quiet "$@" > "$T/$name" 2> "$T/$name.err"; then
        fail "$name: exit $? ($(tail -n 1 "$T/$name.err"))"
    elif [ -n "${UPDATE:-}" ]; then
        cp "$T/$name" "$E/$name"; pass
    elif cmp -s "$T/$name" "$E/$name"; then
        pass
    else
        fail "$name: output differs from $E/$name:"; diff "$E/$name" "$T/$name" | head -n 20
    fi
}

for set in prot dna; do
    if [ $set = prot ]; then Q=$D/cli_q.fasta DB=$D/cli_db.fasta; else
        Q=$D/cli_dna_q.fasta DB=$D/cli_dna_db.fasta; fi
    golden search_${set}_0.out -q $Q -d $DB -f 0
    golden search_${set}_5.xml -q $Q -d $DB -f 5
    golden search_${set}_15.json -q $Q -d $DB -f 15
    golden search_${set}_17.sam -q $Q -d $DB -f 17
    "$SWGPU" search --quiet -q $Q -d $DB -f "$COLS" > "$T/$set.tab"
    if $PY -c 'from Bio.Blast import NCBIXML' 2>/dev/null; then
        $PY tests/cli/blast_formats.py 5 "$T/search_${set}_5.xml" "$T/$set.tab" > "$T/py5" &&
            pass || fail "$set: format 5 against format 6: $(cat "$T/py5")"
    else
        skip "format 5: $PY has no Biopython (Debian: python3-biopython)"
    fi
    $PY tests/cli/blast_formats.py 15 "$T/search_${set}_15.json" "$T/$set.tab" > "$T/py15" &&
        pass || fail "$set: format 15 against format 6: $(cat "$T/py15")"
    if command -v samtools >/dev/null; then
        n=$(wc -l < "$T/$set.tab")
        m=$(samtools view "$T/search_${set}_17.sam" 2> "$T/sam.err" | wc -l)
        [ "$m" -eq "$n" ] && [ ! -s "$T/sam.err" ] && pass ||
            fail "$set: samtools view: $m records for $n hits ($(head -n 2 "$T/sam.err"))"
        minus=$(awk -F'\t' '$8 > $9' "$T/$set.tab" | wc -l)
        m16=$(samtools view -f 16 "$T/search_${set}_17.sam" | wc -l)
        [ "$m16" -eq "$minus" ] && pass || fail "$set: $m16 records of flag 16, $minus minus-strand hits"
        samtools flagstat "$T/search_${set}_17.sam" > "$T/flagstat" 2>&1 &&
            grep -q "^$n + 0 mapped" "$T/flagstat" && pass ||
            fail "$set: samtools flagstat: $(head -n 6 "$T/flagstat")"
    else
        skip "format 17: samtools is not installed (Debian: samtools)"
    fi
done
# the minus strand in each format: hit-from > hit-to, frame -1, "Minus"
grep -q '<Hsp_hit-frame>-1</Hsp_hit-frame>' "$T/search_dna_5.xml" && pass || fail "XML: no frame -1"
grep -q '"hit_strand": "Minus"' "$T/search_dna_15.json" && pass || fail "JSON: no Minus strand"
grep -q '^ Strand=Plus/Minus$' "$T/search_dna_0.out" && pass || fail "report: no Plus/Minus"
# iterated searches: every round a block (XML: an Iteration each; JSON: one
# report per query, its rounds in "iterations"); PSSM queries: psiblast's
Q=$D/cli_q.fasta DB=$D/cli_db.fasta
"$SWGPU" search -q $Q -d $DB --iterations 2 --report all -n 2 -f 15 --quiet > "$T/it.json" &&
    $PY -c 'import json,sys; d=json.load(open(sys.argv[1]))["BlastOutput2"]
print([len(r["report"]["results"]["iterations"]) for r in d])' "$T/it.json" > "$T/it.n" &&
    [ "$(cat "$T/it.n")" = "[2, 2, 1]" ] && pass || fail "JSON iterations: $(cat "$T/it.n")"
if $PY -c 'from Bio.Blast import NCBIXML' 2>/dev/null; then
    "$SWGPU" search -q $Q -d $DB --iterations 2 --report all -n 2 -f 5 --quiet > "$T/it.xml" &&
        $PY -c 'import sys; from Bio.Blast import NCBIXML
print(" ".join("%s:%d" % (r.query_id, len(r.alignments)) for r in NCBIXML.parse(open(sys.argv[1]))))' \
        "$T/it.xml" > "$T/it.x" && [ "$(cat "$T/it.x")" = "q1:2 q1:2 q2:2 q2:2 q3:0" ] && pass ||
        fail "XML iterations: $(cat "$T/it.x")"
    "$SWGPU" search --pssm $D/q104.pssm -d $D/pssm_subjects.fa -n 2 -f 5 --quiet > "$T/pssm.xml" &&
        $PY -c 'import sys; from Bio.Blast import NCBIXML
r = next(NCBIXML.parse(open(sys.argv[1]))); print(r.application, r.query_id, len(r.alignments))' \
        "$T/pssm.xml" > "$T/pssm.x" && [ "$(cat "$T/pssm.x")" = "PSIBLAST q104 2" ] && pass ||
        fail "XML of a PSSM search: $(cat "$T/pssm.x")"
fi
# --no-align: these formats need the alignments
bad "format 0 without alignments" "formats 0, 5, 15 and 17 need the alignments" \
    search -q $D/cli_q.fasta -d $D/cli_db.fasta -f 0 --no-align --quiet
bad "format 17 without alignments" "formats 0, 5, 15 and 17 need the alignments" \
    search -q $D/cli_q.fasta -d $D/cli_db.fasta -f 17 --no-align --quiet
bad "format 5 with columns" "format 5 takes no columns \\('qseqid'\\)" \
    search -q $D/cli_q.fasta -d $D/cli_db.fasta -f '5 qseqid' --quiet
# BLAST's -outfmt stands for -f
"$SWGPU" search -query $D/cli_q.fasta -db $D/cli_db.fasta -outfmt 5 --quiet > "$T/alias.xml" 2>&1 &&
    cmp -s "$T/alias.xml" "$E/search_prot_5.xml" && pass || fail "-outfmt 5 differs from -f 5"
finish
