/* Constants shared by the agent, flameattach and flameconv: version, exit codes, limits. */
#ifndef FLAMEAGENT_H
#define FLAMEAGENT_H

#define FLAMEAGENT_VERSION "0.1.0"

/* Exit codes of flameattach / flameconv (ARCHITECTURE.md section 4). */
#define FA_EXIT_OK 0
#define FA_EXIT_USAGE 1
#define FA_EXIT_ATTACH 2
#define FA_EXIT_AGENT 3
#define FA_EXIT_OUTPUT 4

/* Agent_OnAttach return codes (what the attach reply carries). */
#define FA_RC_OK 0
#define FA_RC_BAD_OPTION 100
#define FA_RC_STATE 101  /* e.g. stop while idle and nothing to write */
#define FA_RC_ENGINE 102 /* engine failed to start */
#define FA_RC_OUTPUT 103 /* cannot write the output */

#define FA_MAX_PATH 4096

#endif
