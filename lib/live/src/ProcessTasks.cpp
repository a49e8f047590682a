#include "ProcessTasks.h"

#include <dirent.h>
#include <fstream>
#include <string>

namespace stackwalk::live {

std::vector<pid_t> listTasks(pid_t pid) {
  std::vector<pid_t> tids;
  DIR *dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (!dir) return tids;
  while (dirent *entry = readdir(dir))
    if (entry->d_name[0] >= '1' && entry->d_name[0] <= '9') tids.push_back(pid_t(std::stol(entry->d_name)));
  closedir(dir);
  return tids;
}

bool taskAlive(pid_t pid, pid_t tid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  std::string stat;
  if (!std::getline(file, stat)) return false;
  size_t end = stat.rfind(')'); // the name, in parentheses, may hold anything
  return end != std::string::npos && end + 2 < stat.size() && stat[end + 2] != 'Z' && stat[end + 2] != 'X';
}

std::optional<pid_t> addressSpaceTask(pid_t pid) {
  if (taskAlive(pid, pid)) return pid;
  for (pid_t tid : listTasks(pid))
    if (taskAlive(pid, tid)) return tid;
  return std::nullopt;
}

} // namespace stackwalk::live
