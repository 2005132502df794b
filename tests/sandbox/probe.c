/* The static helper of the sandbox probe agent (tests/sandbox/test_sandbox_threats.py):
 * each subcommand makes one system call an escaping agent would, and prints one line,
 * "<what>: ESCAPED" when the kernel let it through or "<what>: refused (<error>)".
 * Built with `gcc -static`, so it runs the same on the host, under bubblewrap and in a
 * FROM-scratch image. */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int report(const char *what, int rc) {
    if (rc == 0) {
        printf("%s: ESCAPED\n", what);
    } else {
        printf("%s: refused (%s)\n", what, strerror(errno));
    }
    fflush(stdout);
    return 0;
}

static int forkbomb(int wanted) {
    pid_t *children = calloc((size_t)wanted, sizeof(pid_t));
    int made = 0;
    for (; made < wanted; made++) {
        pid_t pid = fork();
        if (pid < 0) break;
        if (pid == 0) { pause(); _exit(0); }
        children[made] = pid;
    }
    int error = errno;
    for (int i = 0; i < made; i++) kill(children[i], SIGKILL);
    for (int i = 0; i < made; i++) waitpid(children[i], NULL, 0);
    if (made == wanted) {
        printf("fork bomb: ESCAPED (%d processes)\n", made);
    } else {
        printf("fork bomb: refused (%s after %d processes)\n", strerror(error), made);
    }
    return 0;
}

static int setuid_file(const char *path) {
    /* The mode bit two ways: chmod of an own file, and open(O_CREAT) with it. */
    char created[4096];
    int fd = open(path, O_CREAT | O_WRONLY, 0755);
    if (fd >= 0) close(fd);
    int rc = chmod(path, 04755);
    struct stat info;
    if (rc == 0 && stat(path, &info) == 0 && !(info.st_mode & S_ISUID)) rc = -1;
    report("setuid chmod", rc);
    snprintf(created, sizeof created, "%s.created", path);
    fd = open(created, O_CREAT | O_WRONLY | O_EXCL, 04755);
    rc = fd < 0 ? -1 : 0;
    if (fd >= 0) {
        close(fd);
        if (stat(created, &info) == 0 && !(info.st_mode & S_ISUID)) { rc = -1; errno = EPERM; }
    }
    return report("setuid create", rc);
}

static int unix_connect(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return report("unix socket", -1);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    int rc = connect(fd, (struct sockaddr *)&address, sizeof address);
    close(fd);
    return report("unix socket", rc);
}

static int tcp_connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return report("tcp socket", -1);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = connect(fd, (struct sockaddr *)&address, sizeof address);
    close(fd);
    return report("tcp socket", rc);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *what = argv[1];
    const char *arg = argc > 2 ? argv[2] : "";
    if (!strcmp(what, "umount")) return report("umount", umount2(arg, MNT_DETACH));
    if (!strcmp(what, "remount")) {
        /* `mount -o remount,rw,bind /`: the host's root made writable. */
        return report("remount rw", mount("none", "/", NULL, MS_REMOUNT | MS_BIND, NULL));
    }
    if (!strcmp(what, "mknod")) return report("mknod", mknod(arg, S_IFBLK | 0666, makedev(8, 0)));
    if (!strcmp(what, "chown")) return report("chown", chown(arg, 4242, 4242));
    if (!strcmp(what, "ptrace")) {
        pid_t pid = (pid_t)atoi(arg);
        long rc = ptrace(PTRACE_ATTACH, pid, NULL, NULL);
        if (rc == 0) ptrace(PTRACE_DETACH, pid, NULL, NULL);
        return report("ptrace", rc == 0 ? 0 : -1);
    }
    if (!strcmp(what, "setuid")) return setuid_file(arg);
    if (!strcmp(what, "unix")) return unix_connect(arg);
    if (!strcmp(what, "tcp")) return tcp_connect(atoi(arg));
    if (!strcmp(what, "forkbomb")) return forkbomb(atoi(arg));
    return 2;
}
