// A batch's progress on a terminal: a bar with done/total, failures, rate,
// elapsed time and the time left; messages print above it, never onto it.
// Nothing is drawn when stderr is not a terminal (or for a single dump).
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace stackwalk {

class Progress {
public:
  Progress(size_t total, std::ostream &err, bool terminal);
  ~Progress();
  // One more dump reported (or failed).
  void done(const std::string &path, bool failed);
  // A line for the user ("stackwalk: ..."), above the bar.
  void message(const std::string &line);

private:
  void draw();

  size_t total_, done_ = 0, failed_ = 0;
  std::ostream &err_;
  bool enabled_;
  std::string last_; // the dump last reported
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

} // namespace stackwalk
