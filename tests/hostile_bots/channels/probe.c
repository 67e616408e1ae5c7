/* The channel probe of probe.py as a native program (what a Go or C++ bot is to the kernel):
 * the same line protocol for the channels "posix-lock", "flock" and "inotify", so that the
 * jail is shown to close them for a binary that makes the calls itself, with no Python
 * between it and the kernel (tests/hosting/test_sandbox_channels.py builds it with cc). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <unistd.h>

#define BITS 64

static const char *channel, *shared;
static int inotify_fd = -1, watches[BITS];

static void path_of(char *out, size_t size, int i) { snprintf(out, size, "%s/bit%02d", shared, i); }

/* once the kernel said no, every later request is answered with what it said */
static char refusal[256];

static void refuse(void) {
    if (!refusal[0]) snprintf(refusal, sizeof refusal, "refused [Errno %d] %s", errno, strerror(errno));
}

static int lock_byte(int fd, int cmd, short type, int i, short *seen) {
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = i, .l_len = 1};
    if (fcntl(fd, cmd, &fl) < 0) return -1;
    if (seen) *seen = fl.l_type;
    return 0;
}

static int prepare(void) {
    if (strcmp(channel, "inotify") != 0) return 0;
    inotify_fd = inotify_init1(IN_NONBLOCK);
    if (inotify_fd < 0) return -1;
    for (int i = 0; i < BITS; i++) {
        char p[4096];
        path_of(p, sizeof p, i);
        watches[i] = inotify_add_watch(inotify_fd, p, IN_OPEN | IN_ACCESS);
        if (watches[i] < 0) return -1;
    }
    return 0;
}

static int send_bits(const char *bits) {
    char p[4096];
    if (strcmp(channel, "posix-lock") == 0) {
        snprintf(p, sizeof p, "%s/lockfile", shared);
        int fd = open(p, O_RDONLY);
        if (fd < 0) return -1;
        for (int i = 0; i < BITS; i++)
            if (bits[i] == '1' && lock_byte(fd, F_SETLK, F_RDLCK, i, NULL) < 0) return -1;
        return 0; /* the fd stays open: the locks are held until the process ends */
    }
    for (int i = 0; i < BITS; i++) {
        if (bits[i] != '1') continue;
        path_of(p, sizeof p, i);
        int fd = open(p, O_RDONLY);
        if (fd < 0) return -1;
        if (strcmp(channel, "flock") == 0) {
            if (flock(fd, LOCK_SH) < 0) return -1;
        } else {
            char buf[16];
            if (read(fd, buf, sizeof buf) < 0) return -1;
            close(fd);
        }
    }
    return 0;
}

static int receive(char *bits) {
    char p[4096];
    memset(bits, '0', BITS);
    bits[BITS] = 0;
    if (strcmp(channel, "posix-lock") == 0) {
        snprintf(p, sizeof p, "%s/lockfile", shared);
        int fd = open(p, O_RDONLY);
        if (fd < 0) return -1;
        for (int i = 0; i < BITS; i++) {
            short seen;
            if (lock_byte(fd, F_GETLK, F_WRLCK, i, &seen) < 0) return -1;
            bits[i] = seen != F_UNLCK ? '1' : '0';
        }
        close(fd);
        return 0;
    }
    if (strcmp(channel, "flock") == 0) {
        for (int i = 0; i < BITS; i++) {
            path_of(p, sizeof p, i);
            int fd = open(p, O_RDONLY);
            if (fd < 0) return -1;
            if (flock(fd, LOCK_EX | LOCK_NB) == 0) bits[i] = '0';
            else if (errno == EWOULDBLOCK) bits[i] = '1';
            else return -1;
            close(fd);
        }
        return 0;
    }
    usleep(50000);
    char buf[65536];
    struct pollfd pfd = {.fd = inotify_fd, .events = POLLIN};
    while (poll(&pfd, 1, 50) > 0) {
        ssize_t n = read(inotify_fd, buf, sizeof buf);
        for (ssize_t at = 0; at + (ssize_t)sizeof(struct inotify_event) <= n;) {
            struct inotify_event *ev = (struct inotify_event *)(buf + at);
            for (int i = 0; i < BITS; i++)
                if (watches[i] == ev->wd) bits[i] = '1';
            at += sizeof(struct inotify_event) + ev->len;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    channel = argv[1];
    shared = argv[3];
    int sender = strcmp(argv[2], "send") == 0;
    if (!sender && prepare() < 0) refuse();
    printf("%s\n", refusal[0] ? refusal : "ok");
    fflush(stdout);
    char line[256], bits[BITS + 1];
    while (fgets(line, sizeof line, stdin)) {
        if (!refusal[0] && sender && send_bits(line + 5) < 0) refuse();
        if (!refusal[0] && !sender && receive(bits) < 0) refuse();
        if (refusal[0]) printf("%s\n", refusal);
        else if (sender) printf("ok\n");
        else printf("bits %s\n", bits);
        fflush(stdout);
    }
    return 0;
}
