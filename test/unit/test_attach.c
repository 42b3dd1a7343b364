/* Unit tests: the attach protocol against a fake listener (request bytes, reply shapes of JDK 8, 9+ and
 * 21+, refusals), and reply parsing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "attach.h"
#include "check.h"

static char root[] = "/tmp/fa-attach-XXXXXX";
static int listen_fd;
static char request[4096];
static size_t request_len;
static const char *reply;

static void *serve(void *arg)
{
	(void)arg;
	int c = accept(listen_fd, NULL, NULL);
	request_len = 0;
	/* the request ends after the 5th NUL: "1", "load", lib, "true", options */
	int nuls = 0;
	while (nuls < 5 && request_len < sizeof(request)) {
		ssize_t n = read(c, request + request_len, 1);
		if (n <= 0)
			break;
		if (request[request_len++] == 0)
			nuls++;
	}
	if (write(c, reply, strlen(reply)) < 0)
		perror("write");
	close(c);
	return NULL;
}

static int run(const char *rep, int *agent_rc, char *text, char *err)
{
	reply = rep;
	pthread_t t;
	pthread_create(&t, NULL, serve, NULL);
	struct proc_info pi;
	memset(&pi, 0, sizeof(pi));
	pi.pid = getpid();
	pi.nspid = 4242;
	snprintf(pi.root, sizeof(pi.root), "%s", root);
	int rc = attach_load(&pi, "/opt/fa/lib/libflameagent.so", "start,event=cpu", agent_rc, text, 256, err, 256);
	pthread_join(t, NULL);
	return rc;
}

int main(void)
{
	int cmd, agent;
	char text[256], err[256];
	CHECK_INT(0, attach_parse_reply("0\nreturn code: 0\n", &cmd, &agent, text, sizeof(text)));
	CHECK_INT(0, cmd);
	CHECK_INT(0, agent);
	CHECK_INT(0, attach_parse_reply("0\n100\n", &cmd, &agent, text, sizeof(text))); /* JDK 8 */
	CHECK_INT(100, agent);
	CHECK_INT(0, attach_parse_reply("0\nreturn code: 102\nsome text\n", &cmd, &agent, text, sizeof(text)));
	CHECK_INT(102, agent);
	CHECK_STR("some text", text);
	CHECK_INT(0, attach_parse_reply("0\nDynamic agent loading is not enabled\n", &cmd, &agent, text, sizeof(text)));
	CHECK_INT(-1, agent); /* JDK 21+: a 0 with an error text */
	CHECK_STR("Dynamic agent loading is not enabled", text);
	CHECK_INT(0, attach_parse_reply("101\nsomething failed\n", &cmd, &agent, text, sizeof(text)));
	CHECK_INT(101, cmd);
	CHECK(attach_parse_reply("garbage", &cmd, &agent, text, sizeof(text)) != 0);

	CHECK(mkdtemp(root) != NULL);
	char path[256];
	snprintf(path, sizeof(path), "%s/tmp", root);
	mkdir(path, 0755);
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/tmp/.java_pid4242", root);
	listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_INT(0, bind(listen_fd, (struct sockaddr *)&addr, sizeof(addr)));
	CHECK_INT(0, listen(listen_fd, 4));

	struct proc_info pi;
	memset(&pi, 0, sizeof(pi));
	pi.pid = getpid();
	pi.nspid = 4242;
	snprintf(pi.root, sizeof(pi.root), "%s", root);
	CHECK_INT(ATTACH_OK, attach_wake(&pi, 1000, err, sizeof(err))); /* the socket is there: no signal */

	int agent_rc;
	CHECK_INT(ATTACH_OK, run("0\nreturn code: 0\n", &agent_rc, text, err));
	static const char expect[] = "1\0load\0/opt/fa/lib/libflameagent.so\0true\0start,event=cpu";
	CHECK_INT(sizeof(expect), request_len);
	CHECK(memcmp(request, expect, sizeof(expect)) == 0);
	CHECK_INT(0, agent_rc);
	CHECK_INT(ATTACH_OK, run("0\n3\n", &agent_rc, text, err));
	CHECK_INT(3, agent_rc);
	CHECK_INT(ATTACH_OK, run("0\nreturn code: 100\n", &agent_rc, text, err));
	CHECK_INT(100, agent_rc);
	CHECK_INT(ATTACH_IO, run("102\nAgent_OnAttach failed\n", &agent_rc, text, err));
	CHECK(strstr(err, "refused to load the agent (attach code 102): Agent_OnAttach failed") != NULL);

	/* no socket and a process that ignores SIGQUIT: a clear refusal without waiting */
	unlink(addr.sun_path);
	pi.sigquit_ignored = 1;
	CHECK_INT(ATTACH_DISABLED, attach_wake(&pi, 1000, err, sizeof(err)));
	CHECK(strstr(err, "ignores SIGQUIT") != NULL);
	close(listen_fd);
	char cmdline[300];
	snprintf(cmdline, sizeof(cmdline), "rm -rf %s", root);
	CHECK_INT(0, system(cmdline));
	return check_report();
}
