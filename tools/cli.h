/*
 * cli.h - shared pieces of the swgpu command-line tool (not the library).
 * tools/swgpu.c holds main() and dispatches to one function per subcommand;
 * each subcommand lives in its own tools/cmd_*.c file.
 */
#ifndef SWGPU_CLI_H
#define SWGPU_CLI_H

#include "swgpu.h"

/* subcommands: argv[0] is the subcommand name; return the exit status */
int swgpu_cmd_search(int argc, char **argv);
int swgpu_cmd_makedb(int argc, char **argv);
int swgpu_cmd_align(int argc, char **argv);

/* logging helpers installed by main(): "[swgpu 1.23s] message" on stderr */
void cli_install_logger(int verbosity);
/* print "swgpu: <msg>" to stderr */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
double cli_elapsed(void);

#endif
