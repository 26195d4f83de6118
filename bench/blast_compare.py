#!/usr/bin/env python3
"""blast_compare.py - swgpu search against blastp on the pairs both report.

Reads two tabular outputs with the columns `qseqid sseqid score bitscore
evalue` (blastp -outfmt '6 qseqid sseqid score bitscore evalue', swgpu -f
the same) and prints a table: the pairs each reports (blastp's first row per
pair: its best HSP), the pairs both report, the share of those with equal raw
score, with swgpu higher and lower, the share whose E-value and bit score are
printed alike, and the share of E-values within 1%.

    bench/blast_compare.py BLASTP.tsv SWGPU.tsv [LABEL]

Example (composition-based statistics, issue 30; uniprot20k made with
`makeblastdb -in uniprot20k.fasta -dbtype prot -out u20k`):

    blastp -query queries250.fasta -db u20k -outfmt '6 qseqid sseqid score bitscore evalue' \\
        -max_target_seqs 500 -evalue 10 > blastp.tsv
    swgpu search -q queries250.fasta -d uniprot20k.fasta.gz --comp-based-stats 2 -n 500 \\
        -e 10 -f '6 qseqid sseqid score bitscore evalue' > swgpu.tsv
    bench/blast_compare.py blastp.tsv swgpu.tsv "mode 2"
"""
import sys


def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            q, s, score, bits, ev = line.rstrip("\n").split("\t")[:5]
            rows.setdefault((q, s), (int(score), bits.strip(), ev.strip()))
    return rows


def within(a, b, rel):
    x, y = float(a), float(b)
    return abs(x - y) <= rel * max(abs(x), abs(y)) or x == y


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    b, s = load(sys.argv[1]), load(sys.argv[2])
    label = sys.argv[3] if len(sys.argv) > 3 else sys.argv[2]
    both = [k for k in b if k in s]
    eq = [k for k in both if b[k][0] == s[k][0]]
    hi = sum(s[k][0] > b[k][0] for k in both)
    lo = sum(s[k][0] < b[k][0] for k in both)
    same = sum(b[k][1:] == s[k][1:] for k in eq)
    ev1 = sum(within(b[k][2], s[k][2], 0.01) for k in both)
    n = len(both) or 1

    def pct(x):
        return "%d (%.1f%%)" % (x, 100.0 * x / n)

    print("| %s | value |" % label)
    print("|---|---|")
    print("| pairs blastp / swgpu / both | %d / %d / %d |" % (len(b), len(s), len(both)))
    print("| blastp's pairs swgpu lacks | %d |" % (len(b) - len(both)))
    print("| equal raw score | %s |" % pct(len(eq)))
    print("| swgpu higher / lower | %s / %s |" % (pct(hi), pct(lo)))
    print("| equal score, same E-value and bit score as printed | %d of %d |" % (same, len(eq)))
    print("| E-value within 1%% | %s |" % pct(ev1))


if __name__ == "__main__":
    main()
