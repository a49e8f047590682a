// The tasks (threads) of a live process, as /proc/PID/task lists them.
#pragma once

#include <optional>
#include <sys/types.h>
#include <vector>

namespace stackwalk::live {

// The ids in /proc/PID/task, the process's own among them while it is there.
std::vector<pid_t> listTasks(pid_t pid);

// Whether the task is still there and not exiting (state Z or X): the kernel
// refuses to trace one that is exiting with EPERM, as it refuses another
// user's process.
bool taskAlive(pid_t pid, pid_t tid);

// The task whose /proc entries show the process's address space: the process
// itself, or, once its main thread has exited (pthread_exit) while others run
// on, one of those, since the exited main thread's maps, auxv, cmdline and
// mem are empty then. nullopt when no task is alive: the process has exited.
std::optional<pid_t> addressSpaceTask(pid_t pid);

} // namespace stackwalk::live
