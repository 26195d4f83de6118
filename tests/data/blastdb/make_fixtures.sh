#!/bin/sh
# make_fixtures.sh - rebuild the BLAST database fixtures of this directory
# from its FASTA files with NCBI's makeblastdb (run by hand, from this
# directory; the tests read the committed files and need no BLAST).
#
#   prot.fa      UniProt records and edge cases (a bare-word id, '*' at the
#                end and inside, a '-' gap, B Z X, lower case, a record of
#                stops only, an empty record, blanks around the title)
#   nuc.fa       DNA with every IUPAC code, runs of N in the short and long
#                ambiguity forms (and one split into several runs), U, lower
#                case, a gap, lengths 1 and multiples of 4
#   ids.fa       every kind of Seq-id that -parse_seqids recognises
#   multidef.fa  one sequence with three deflines (^A-separated)
#   seqids.fa    deflines of several Seq-ids each, in both orders of pairs
#                of types (which one blastp names the defline by)
#   tax.fa       UniProt, RefSeq, gi, pdb, gnl, bare and plain ids, and
#                entries of several deflines (^A), with the taxids of
#                tax.map (one id has none, 7227 is not in ../taxdb)
#   ids_q.fa     queries for these (blastp_ids.sh)
#
# Databases (the LMDB files of version 5, .pdb .pot .ptf .pto .pos .pog,
# are removed: searching does not read them):
#   prot_v4 prot_v5 nuc_v4 nuc_v5        without -parse_seqids
#   prot_v4s prot_v5s nuc_v4s nuc_v5s    with -parse_seqids
#   prot_mv  (version 5) nuc_mv (version 4): several volumes (-max_file_sz),
#            an alias file listing them
#   ids_v4s multidef_v4s                 with -parse_seqids
#   seqids_v5s (version 5: blastp 2.12 prints "Unknown" for some of its
#            subjects from a version 4 one), tax_v5s  with -parse_seqids,
#            tax_v5s with -taxid_map tax.map
#   tax_v4   without -parse_seqids, every sequence -taxid 562
# alias/nested.pal (written by hand) lists the alias prot_mv and the volume
# prot_v4 by relative paths.
set -e
cd "$(dirname "$0")"
mk() { # IN TYPE OUT VERSION [options]
    in=$1 type=$2 out=$3 ver=$4; shift 4
    rm -f "$out".*
    makeblastdb -in "$in" -dbtype "$type" -out "$out" -blastdb_version "$ver" -title "$out" "$@" >/dev/null
}
mk prot.fa prot prot_v4 4
mk prot.fa prot prot_v5 5
mk prot.fa prot prot_v4s 4 -parse_seqids
mk prot.fa prot prot_v5s 5 -parse_seqids
mk prot.fa prot prot_mv 5 -max_file_sz 1500
mk nuc.fa nucl nuc_v4 4
mk nuc.fa nucl nuc_v5 5
mk nuc.fa nucl nuc_v4s 4 -parse_seqids
mk nuc.fa nucl nuc_v5s 5 -parse_seqids
mk nuc.fa nucl nuc_mv 4 -max_file_sz 1000
mk ids.fa prot ids_v4s 4 -parse_seqids
mk multidef.fa prot multidef_v4s 4 -parse_seqids
mk seqids.fa prot seqids_v5s 5 -parse_seqids
mk tax.fa prot tax_v5s 5 -parse_seqids -taxid_map tax.map
mk tax.fa prot tax_v4 4 -taxid 562
rm -f ./*.pdb ./*.pot ./*.ptf ./*.pto ./*.pos ./*.pog ./*.psd ./*.psi ./*.nsd ./*.nsi \
      ./*.pnd ./*.pni ./*.ndb ./*.not ./*.ntf ./*.nto ./*.nos ./*.nog ./*.nnd ./*.nni
mkdir -p alias
cat > alias/nested.pal <<'EOF'
#
# written by hand: an alias file (prot_mv, itself an alias of volumes) and a
# volume (prot_v4), by paths relative to this file
#
TITLE nested
DBLIST ../prot_mv "../prot_v4"
EOF
