#!/usr/bin/env python3
"""make_taxdb.py - write NCBI's taxonomy name database (taxdb.bti, taxdb.btd)
from a small table, as the fixture of tests/data/taxdb (no internet: NCBI's
taxdb.tar.gz is not fetched).

Input (names.tsv): one taxon a line, tab-separated: taxid, scientific name,
common name, BLAST name, superkingdom; '#' lines are comments.

Format (NCBI's seqdbtax.cpp reads it so; blastp 2.12 prints the names from
the files this writes, tests/cli/expected/README):
  taxdb.bti  big-endian u32s: magic 0x8739, the number of taxa, 4 reserved
             zeros, then per taxon in ascending taxid order: taxid, the
             offset of its record in taxdb.btd;
  taxdb.btd  the records one after another, each "sci\\tcommon\\tblast\\tkingdom"
             with no terminator (a record ends where the next begins, the
             last one at the end of the file).

Usage: python3 make_taxdb.py names.tsv OUTDIR
"""
import struct
import sys


def main(table, outdir):
    taxa = []
    with open(table, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            taxid, sci, com, blast, king = line.split("\t")
            taxa.append((int(taxid), "\t".join((sci, com, blast, king)).encode()))
    taxa.sort()
    data, index = b"", b""
    for taxid, rec in taxa:
        index += struct.pack(">II", taxid, len(data))
        data += rec
    with open(outdir + "/taxdb.bti", "wb") as f:
        f.write(struct.pack(">6I", 0x8739, len(taxa), 0, 0, 0, 0) + index)
    with open(outdir + "/taxdb.btd", "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
