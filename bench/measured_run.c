// SPDX-License-Identifier: MIT
// heapkit-measured-run REPORT COMMAND [ARGS...]: runs COMMAND and writes to REPORT one
// line "<user+system microseconds> <peak RSS KiB> <exit status>", from wait4.
//
// Why not the harness's own wait4: a process forked from Python starts with Python's
// memory, and the kernel keeps the larger of that and the program's own peak as the
// child's maxrss (it records the old memory's high-water mark at exec), so even `cat`
// showed 18 MiB. Forked from this small C program, the figure is the program's own.
// Why not /usr/bin/time: it prints CPU seconds in hundredths, too coarse for runs of a
// few milliseconds.
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: heapkit-measured-run REPORT COMMAND [ARGS...]\n");
        return 2;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("heapkit-measured-run: fork");
        return 2;
    }
    if (child == 0) {
        execvp(argv[2], argv + 2);
        perror("heapkit-measured-run: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(child, &status, 0, &usage) < 0) {
        perror("heapkit-measured-run: wait4");
        return 2;
    }
    FILE* report = fopen(argv[1], "w");
    if (report == NULL) {
        perror("heapkit-measured-run: report");
        return 2;
    }
    long long micros = (long long)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000 +
                       usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    fprintf(report, "%lld %ld %d\n", micros, usage.ru_maxrss, code);
    fclose(report);
    return code;
}
