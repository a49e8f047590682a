#include "Progress.h"

#include "stackwalk/core/PrintableText.h"

#include <cstdio>

namespace stackwalk {
namespace {

// "42s", "3m05s", "2h07m".
std::string duration(double seconds) {
  long s = long(seconds + 0.5);
  char buffer[32];
  if (s < 60) std::snprintf(buffer, sizeof buffer, "%lds", s);
  else if (s < 3600) std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, s % 3600 / 60);
  return buffer;
}

} // namespace

Progress::Progress(size_t total, std::ostream &err, bool terminal)
    : total_(total), err_(err), enabled_(total > 1 && terminal) {}

Progress::~Progress() {
  if (enabled_) err_ << "\n";
}

void Progress::done(const std::string &path, bool failed) {
  ++done_;
  failed_ += failed;
  last_ = path;
  draw();
}

void Progress::message(const std::string &line) {
  if (enabled_) err_ << "\r\x1b[K"; // clear the bar, print, draw it again below
  err_ << line << "\n";
  draw();
}

void Progress::draw() {
  if (!enabled_ || !done_) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = elapsed > 0 ? double(done_) / elapsed : 0;
  size_t width = 30, filled = done_ * width / total_;
  char numbers[160];
  std::snprintf(numbers, sizeof numbers, "] %zu/%zu, %zu failed, %.1f dumps/s, %s elapsed, %s left ", done_, total_,
                failed_, rate, duration(elapsed).c_str(),
                rate > 0 ? duration(double(total_ - done_) / rate).c_str() : "?");
  err_ << "\r[" << std::string(filled, '#') << std::string(width - filled, '.') << numbers
       << printable(last_.substr(last_.size() > 30 ? last_.size() - 30 : 0)) << "\x1b[K" << std::flush;
}

} // namespace stackwalk
