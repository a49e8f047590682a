// StackwalkDotnet: a .NET 10 test program for a mixed native/managed stack walker.
//
//   StackwalkDotnet park RECORD.json   start the scenario threads (a)-(e), write the program's
//                                      own record of every scenario thread's stack to
//                                      RECORD.json once all are parked, print READY, block
//                                      forever (the dump is taken from outside)
//   StackwalkDotnet crash RECORD.json  (f): start one parked helper thread, write the record of
//                                      the crashing thread, then throw an unhandled
//                                      InvalidOperationException four NoInlining calls deep
//                                      (with DOTNET_DbgEnableMiniDump=1 the runtime writes
//                                      the dump itself)
//   StackwalkDotnet nullref RECORD.json (g): on a worker thread, after warming it up, call a
//                                      small optimized static method with null: it faults at
//                                      its first instruction (an unhandled
//                                      NullReferenceException; the record names the faulting
//                                      method above its caller's recorded stack)
//
// Every method of interest is [MethodImpl(NoInlining)]; each scenario thread records its own
// stack (new StackTrace(1, false), the recorder skipped) right before its blocking call.
// No System.Text.Json etc.: the JSON is written by hand so that the process maps as few
// assemblies as possible.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq.Expressions;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace StackwalkTest.Scenarios
{
#if STACKWALK_WINDOWS
    // The win-x64 build (make-windows-dumps.sh, run under Wine): kernel32 in place of libc,
    // under the same names, so that every scenario keeps its shape.
    internal static unsafe class Native
    {
        [DllImport("kernel32", EntryPoint = "GetCurrentThreadId")]
        public static extern int gettid();

        [DllImport("kernel32", EntryPoint = "GetCurrentProcessId")]
        public static extern int getpid();

        [DllImport("kernel32", EntryPoint = "CreatePipe")]
        public static extern int CreatePipe(nint* readEnd, nint* writeEnd, nint attributes, int size);

        // (b): blittable, so inlined into the caller as on Linux (InlinedCallFrame, no IL stub)
        [DllImport("kernel32", EntryPoint = "ReadFile")]
        public static extern int ReadFile(nint file, byte* buf, int count, int* got, nint overlapped);

        // (h): a bool to marshal (Win32 BOOL), so the call goes through an IL stub
        [DllImport("kernel32", EntryPoint = "SleepEx")]
        public static extern int SleepEx(int milliseconds, [MarshalAs(UnmanagedType.Bool)] bool alertable);
    }
#else
    internal static unsafe class Native
    {
        [DllImport("libc", EntryPoint = "gettid")]
        public static extern int gettid();

        [DllImport("libc", EntryPoint = "getpid")]
        public static extern int getpid();

        [DllImport("libc", EntryPoint = "pipe")]
        public static extern int pipe(int* fds);

        // (b): a blittable P/Invoke; the JIT inlines the transition into the caller
        // (InlinedCallFrame on the caller's stack frame), no IL stub frame.
        [DllImport("libc", EntryPoint = "read")]
        public static extern nint read(int fd, byte* buf, nint count);

        // (h): a string to marshal, so the call goes through an IL stub (IL_STUB_PInvoke)
        [DllImport("libc", EntryPoint = "mkfifo")]
        public static extern int mkfifo(string path, uint mode);

        [DllImport("libc", EntryPoint = "open")]
        public static extern int open(string path, int flags);
    }
#endif

    internal sealed class FrameRecord
    {
        public string Name;          // Namespace.Type.Method (generic type definition's FullName, + for nesting)
        public string Display;       // MethodBase.ToString()
        public string TypeArgs;      // declaring type's generic arguments, or null
        public string MethodArgs;    // method's generic arguments, or null
        public string MethodDesc;    // MethodHandle.Value in hex (the MethodDesc in CoreCLR)
        public int NativeOffset;
        public int ILOffset;
    }

    internal sealed class ThreadRecord
    {
        public string Scenario;
        public string Description;
        public string BlockingCall;
        public int OsThreadId;
        public int ManagedThreadId;
        public bool IsThreadPoolThread;
        public List<FrameRecord> Frames;
    }

    internal static class Recorder
    {
        private static readonly object Lock = new object();
        public static readonly List<ThreadRecord> Records = new List<ThreadRecord>();
        public static readonly CountdownEvent Parked = new CountdownEvent(8);

        // Record the caller's stack (this method skipped), innermost first.
        [MethodImpl(MethodImplOptions.NoInlining)]
        // `next`: a method the caller is about to call, recorded above it (the method that will
        // fault, which cannot record itself).
        public static void RecordAndSignal(string scenario, string description, string blockingCall, bool signal = true,
                                           MethodBase next = null)
        {
            var st = new StackTrace(1, false);
            var frames = new List<FrameRecord>();
            if (next != null)
                frames.Add(new FrameRecord { Name = next.DeclaringType.FullName + "." + next.Name, Display = next.ToString(),
                                             MethodDesc = "0x" + next.MethodHandle.Value.ToString("x"), NativeOffset = -1,
                                             ILOffset = -1 });
            foreach (StackFrame f in st.GetFrames())
            {
                MethodBase m = f.GetMethod();
                var fr = new FrameRecord { NativeOffset = f.GetNativeOffset(), ILOffset = f.GetILOffset() };
                if (m == null)
                {
                    fr.Name = "<unknown>";
                }
                else
                {
                    Type t = m.DeclaringType;
                    Type td = t == null ? null : (t.IsGenericType ? t.GetGenericTypeDefinition() : t);
                    // A method without a declaring type is a DynamicMethod (a compiled
                    // expression), which the runtime's own names put in "DynamicClass".
                    fr.Name = (td == null ? "DynamicClass" : td.FullName) + "." + m.Name;
                    fr.Display = m.ToString();
                    if (t != null && t.IsGenericType)
                        fr.TypeArgs = string.Join(",", Array.ConvertAll(t.GetGenericArguments(), a => a.FullName ?? a.Name));
                    if (m.IsGenericMethod)
                        fr.MethodArgs = string.Join(",", Array.ConvertAll(m.GetGenericArguments(), a => a.FullName ?? a.Name));
                    // A generic method's handle here is its definition's, not the running
                    // instantiation's MethodDesc: not recorded (nor a DynamicMethod's, which has none).
                    if (!m.IsGenericMethod)
                        try { fr.MethodDesc = "0x" + m.MethodHandle.Value.ToString("x"); } catch { fr.MethodDesc = null; }
                }
                frames.Add(fr);
            }
            var rec = new ThreadRecord
            {
                Scenario = scenario,
                Description = description,
                BlockingCall = blockingCall,
                OsThreadId = Native.gettid(),
                ManagedThreadId = Environment.CurrentManagedThreadId,
                IsThreadPoolThread = Thread.CurrentThread.IsThreadPoolThread,
                Frames = frames,
            };
            lock (Lock) Records.Add(rec);
            if (signal) Parked.Signal();
        }

        private static string Q(string s)
        {
            if (s == null) return "null";
            var sb = new StringBuilder("\"");
            foreach (char c in s)
            {
                if (c == '"' || c == '\\') sb.Append('\\').Append(c);
                else if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4"));
                else sb.Append(c);
            }
            return sb.Append('"').ToString();
        }

        public static void Write(string path, string mode)
        {
            var sb = new StringBuilder();
            sb.Append("{\n");
            sb.Append("  \"mode\": ").Append(Q(mode)).Append(",\n");
            sb.Append("  \"pid\": ").Append(Native.getpid()).Append(",\n");
            sb.Append("  \"runtime_version\": ").Append(Q(Environment.Version.ToString())).Append(",\n");
            sb.Append("  \"framework\": ").Append(Q(RuntimeInformation.FrameworkDescription)).Append(",\n");
            sb.Append("  \"corelib\": ").Append(Q(typeof(object).Assembly.Location)).Append(",\n");
            sb.Append("  \"app\": ").Append(Q(typeof(Recorder).Assembly.Location)).Append(",\n");
            sb.Append("  \"process_path\": ").Append(Q(Environment.ProcessPath)).Append(",\n");
            sb.Append("  \"tiered_compilation_env\": ").Append(Q(Environment.GetEnvironmentVariable("DOTNET_TieredCompilation"))).Append(",\n");
            sb.Append("  \"threads\": [\n");
            List<ThreadRecord> recs;
            lock (Lock) { recs = new List<ThreadRecord>(Records); }
            recs.Sort((x, y) => string.CompareOrdinal(x.Scenario, y.Scenario));
            for (int i = 0; i < recs.Count; i++)
            {
                var r = recs[i];
                sb.Append("    {\"scenario\": ").Append(Q(r.Scenario))
                  .Append(", \"os_thread_id\": ").Append(r.OsThreadId)
                  .Append(", \"managed_thread_id\": ").Append(r.ManagedThreadId)
                  .Append(", \"is_thread_pool_thread\": ").Append(r.IsThreadPoolThread ? "true" : "false")
                  .Append(",\n     \"description\": ").Append(Q(r.Description))
                  .Append(",\n     \"blocking_call\": ").Append(Q(r.BlockingCall))
                  .Append(",\n     \"frames\": [\n");
                for (int j = 0; j < r.Frames.Count; j++)
                {
                    var f = r.Frames[j];
                    sb.Append("       {\"name\": ").Append(Q(f.Name))
                      .Append(", \"method_desc\": ").Append(Q(f.MethodDesc))
                      .Append(", \"native_offset\": ").Append(f.NativeOffset)
                      .Append(", \"il_offset\": ").Append(f.ILOffset)
                      .Append(", \"type_args\": ").Append(Q(f.TypeArgs))
                      .Append(", \"method_args\": ").Append(Q(f.MethodArgs))
                      .Append(", \"display\": ").Append(Q(f.Display))
                      .Append(j + 1 < r.Frames.Count ? "},\n" : "}\n");
                }
                sb.Append("     ]}").Append(i + 1 < recs.Count ? ",\n" : "\n");
            }
            sb.Append("  ]\n}\n");
            string tmp = path + ".tmp";
            System.IO.File.WriteAllText(tmp, sb.ToString());
            System.IO.File.Move(tmp, path, true);
        }
    }

    // (a) main thread: Program.Main -> Scenarios.A -> Outer.Inner<int>.B<string> -> Scenarios.C -> Thread.Sleep
    public static class Outer
    {
        public static class Inner<T>
        {
            [MethodImpl(MethodImplOptions.NoInlining)]
            public static int B<U>(T t, U u)
            {
                int r = MainScenario.C(t.GetHashCode(), u.ToString());
                return r + 1;
            }
        }
    }

    public static class MainScenario
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int A(int depth)
        {
            int r = Outer.Inner<int>.B<string>(depth, "b");
            return r + 1;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int C(int x, string s)
        {
            Recorder.RecordAndSignal("a", "main thread: Program.Main -> MainScenario.A -> Outer.Inner<int>.B<string> (nested generic type, generic method over a reference type: shared canonical code) -> MainScenario.C -> Thread.Sleep(Infinite)", "Thread.Sleep(Timeout.Infinite)");
            Thread.Sleep(Timeout.Infinite);
            return x + s.Length;
        }
    }

    // (b) a thread blocked in read() on a pipe nobody writes, through [DllImport("libc")]
    public static unsafe class PInvokeScenario
    {
#if STACKWALK_WINDOWS
        private static nint s_readEnd, s_writeEnd;

        public static void Setup()
        {
            nint readEnd, writeEnd;
            if (Native.CreatePipe(&readEnd, &writeEnd, 0, 0) == 0) throw new Exception("CreatePipe failed");
            s_readEnd = readEnd;
            s_writeEnd = writeEnd; // kept open and never written
        }
#else
        private static int s_readFd = -1;

        public static void Setup()
        {
            int* fds = stackalloc int[2];
            if (Native.pipe(fds) != 0) throw new Exception("pipe failed");
            s_readFd = fds[0];
            // fds[1] (the write end) stays open and is never written
        }
#endif

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void ThreadMain()
        {
            Outer(3);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Outer(int n)
        {
            return BlockInRead(n) + 1;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long BlockInRead(int n)
        {
            byte* buf = stackalloc byte[16];
            Recorder.RecordAndSignal("b", "P/Invoke: PInvokeScenario.ThreadMain -> Outer -> BlockInRead -> libc read() on an empty pipe ([DllImport(\"libc\")], transition inlined into BlockInRead: InlinedCallFrame)", "libc read(pipe) via DllImport");
#if STACKWALK_WINDOWS
            int got;
            return (long)Native.ReadFile(s_readEnd, buf, 16, &got, 0) + n;
#else
            return (long)Native.read(s_readFd, buf, 16) + n;
#endif
        }
    }

    // (c) managed -> delegate* unmanaged -> [UnmanagedCallersOnly] -> block
    public static unsafe class ReversePInvokeScenario
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void ThreadMain()
        {
            CallThroughPointer(7);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int CallThroughPointer(int v)
        {
            delegate* unmanaged<int, int> fp = &Callback;
            return fp(v) + 1;
        }

        [UnmanagedCallersOnly]
        public static int Callback(int v)
        {
            return InsideCallback(v) + 1;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int InsideCallback(int v)
        {
            Recorder.RecordAndSignal("c", "reverse P/Invoke: ReversePInvokeScenario.ThreadMain -> CallThroughPointer -> (delegate* unmanaged: P/Invoke transition) -> [UnmanagedCallersOnly] Callback (reverse P/Invoke entry) -> InsideCallback -> Thread.Sleep(Infinite)", "Thread.Sleep(Timeout.Infinite)");
            Thread.Sleep(Timeout.Infinite);
            return v;
        }
    }

    // (d) blocked inside a catch block after a throw two frames down
    public static class CatchScenario
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void ThreadMain()
        {
            CatchSite(2);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int CatchSite(int n)
        {
            try
            {
                return Thrower1(n);
            }
            catch (InvalidOperationException e)
            {
                return BlockInCatch(e);
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Thrower1(int n)
        {
            return Thrower2(n) + 1;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Thrower2(int n)
        {
            // with an inner exception, as most wrapped failures have one
            if (n > 0) throw new InvalidOperationException("scenario d", new ArgumentException("scenario d's cause"));
            return n;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int BlockInCatch(Exception e)
        {
            Recorder.RecordAndSignal("d", "catch block: CatchScenario.ThreadMain -> CatchSite (catch funclet) -> BlockInCatch -> Thread.Sleep(Infinite), after Thrower2 threw InvalidOperationException through Thrower1", "Thread.Sleep(Timeout.Infinite)");
            Thread.Sleep(Timeout.Infinite);
            return e.Message.Length;
        }
    }

    // (e) an async continuation on a thread-pool thread that blocks
    public static class AsyncScenario
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> RunAsync(int v)
        {
            await Task.Yield();
            return BlockAfterAwait(v) + 1;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int BlockAfterAwait(int v)
        {
            Recorder.RecordAndSignal("e", "async continuation on a thread-pool thread: AsyncScenario.RunAsync (after await Task.Yield(); state machine <RunAsync>d__0.MoveNext) -> BlockAfterAwait -> Thread.Sleep(Infinite)", "Thread.Sleep(Timeout.Infinite)");
            Thread.Sleep(Timeout.Infinite);
            return v;
        }
    }

    // (h) a P/Invoke through an IL stub (its arguments need marshalling), blocked in the
    // native call: open() of a FIFO nobody opens for writing (SleepEx on Windows)
    public static class ILStubScenario
    {
        private static string s_fifo;

        public static void Setup(string recordPath)
        {
#if !STACKWALK_WINDOWS
            s_fifo = recordPath + ".fifo";
            System.IO.File.Delete(s_fifo);
            if (Native.mkfifo(s_fifo, 0x180) != 0) throw new Exception("mkfifo failed");
#endif
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void ThreadMain()
        {
            BlockInStub(4);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int BlockInStub(int n)
        {
            Recorder.RecordAndSignal("h", "IL stub P/Invoke: ILStubScenario.ThreadMain -> BlockInStub -> IL_STUB_PInvoke (a string to marshal) -> libc open() of a FIFO nobody writes (kernel32 SleepEx with a BOOL on Windows)", "libc open(fifo) via an IL stub");
#if STACKWALK_WINDOWS
            return Native.SleepEx(Timeout.Infinite, false) + n;
#else
            return Native.open(s_fifo, 0) + n;
#endif
        }
    }

    // (i) reflection, a static constructor, generic virtual methods over a value type and a
    // reference type, and a compiled expression (a DynamicMethod: DynamicClass.lambda_method)
    public abstract class Visitor
    {
        public abstract int Visit<T>(T value, string tag);
    }

    public sealed class ChainVisitor : Visitor
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public override int Visit<T>(T value, string tag)
        {
            if (typeof(T) == typeof(int)) return Visit<string>(tag, tag) + 1;
            return DynamicScenario.Lambda(tag.Length) + 1;
        }
    }

    public static class InitializedLate
    {
        public static readonly int Value = new ChainVisitor().Visit<int>(1, "generic");
    }

    public static class DynamicScenario
    {
        public static Func<int, int> Lambda;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void ThreadMain()
        {
            var parameter = Expression.Parameter(typeof(int), "n");
            // n => BlockInLambda(n) + 1: work after the call, so that the JIT cannot make it a tail call
            Lambda = Expression.Lambda<Func<int, int>>(Expression.Add(
                Expression.Call(typeof(DynamicScenario).GetMethod(nameof(BlockInLambda)), parameter), Expression.Constant(1)),
                parameter).Compile();
            typeof(DynamicScenario).GetMethod(nameof(Invoked)).Invoke(null, new object[] { 5 });
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Invoked(int n)
        {
            return InitializedLate.Value + n;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int BlockInLambda(int n)
        {
            Recorder.RecordAndSignal("i", "DynamicScenario.ThreadMain -> (reflection) Invoked -> InitializedLate..cctor -> ChainVisitor.Visit<int> -> Visit<string> (generic virtual) -> compiled expression lambda_method -> BlockInLambda -> Thread.Sleep(Infinite)", "Thread.Sleep(Timeout.Infinite)");
            Thread.Sleep(Timeout.Infinite);
            return n;
        }
    }

    // (j) optimized code the runtime made while running: a loop moved to OSR code, which
    // calls a method that tiered up to tier 1
    public static class TieringScenario
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void ThreadMain()
        {
            // About a second of calls: call counting starts only once no method has been
            // compiled at tier 0 for 100 ms (the other threads are starting meanwhile), then
            // 30 calls queue the tier-1 compile, which runs in the background.
            for (int i = 0; i < 2000; i++)
            {
                Hot(i, false);
                if (i % 20 == 0) Thread.Sleep(10);
            }
            Thread.Sleep(300);
            Loop(2_000_000);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Loop(int count)
        {
            long sum = 0;
            for (int i = 0; i < count; i++)
            {
                sum += i ^ (sum >> 3);
                if (i == count - 1) sum += Hot(i, true);
            }
            return sum;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Hot(int i, bool block)
        {
            if (!block) return i * 3;
            Recorder.RecordAndSignal("j", "TieringScenario.ThreadMain -> Loop (a loop that moved to OSR code) -> Hot (tier 1 after 2000 calls) -> Thread.Sleep(Infinite)", "Thread.Sleep(Timeout.Infinite)");
            Thread.Sleep(Timeout.Infinite);
            return i;
        }
    }

    // (f) crash: unhandled InvalidOperationException four NoInlining calls deep on the main thread
    public static class CrashScenario
    {
        public static string RecordPath;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Crash1(int n) { return Crash2(n + 1) + 1; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Crash2(int n) { return Crash3(n + 1) + 1; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Crash3(int n) { return CrashThrow(n + 1) + 1; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int CrashThrow(int n)
        {
            Recorder.RecordAndSignal("f", "crash: Program.Main -> CrashScenario.Crash1 -> Crash2 -> Crash3 -> CrashThrow throws an unhandled InvalidOperationException", "throw (unhandled)", signal: false);
            Recorder.Write(RecordPath, "crash");
            if (n > 0) throw new InvalidOperationException("stackwalk crash scenario f");
            return n;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Helper()
        {
            Thread.Sleep(Timeout.Infinite);
        }
    }

    // (g) nullref: the most common .NET crash, a NullReferenceException in a small optimized
    // static method that dereferences its argument first (`mov eax, [rdi+8]; ret`), so the
    // fault is at the method's first byte, and a lookup of ip - 1 would name the code before it.
    public sealed class Account
    {
        public int Balance;
        public Account(int balance) { Balance = balance; }
    }

    // gc: threads computing in Loop -> Mid -> Leaf while another collects without end. The
    // GC suspends a thread in managed code by hijacking its return address (its return goes
    // to the runtime's OnHijackTripThread, which records a HijackFrame) or by a signal; a
    // dump taken meanwhile holds such threads (dotnet_fresh_test takes several).
    public static class GcScenario
    {
        static long sink;

        // A short leaf, which a suspension mostly interrupts: the GC hijacks its return into Mid.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Leaf(long x) => x * 31 + 7;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Mid(long x)
        {
            long sum = 0;
            for (int i = 0; i < 1000; i++) sum += Leaf(x + i);
            return sum;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Loop()
        {
            long x = Environment.CurrentManagedThreadId;
            for (;;)
            {
                x = Mid(x);
                Volatile.Write(ref sink, x);
            }
        }

        public static void Run()
        {
            for (int i = 0; i < 3; i++) new Thread(Loop) { IsBackground = true, Name = "gc-compute-" + i }.Start();
            new Thread(() =>
            {
                for (;;)
                {
                    var garbage = new byte[100000];
                    GC.Collect(0);
                    GC.KeepAlive(garbage);
                }
            }) { IsBackground = true, Name = "gc-collector" }.Start();
            Console.Out.WriteLine("READY");
            Console.Out.Flush();
            Thread.Sleep(Timeout.Infinite);
        }
    }

    public static class NullRefScenario
    {
        public static string RecordPath;

        // Tiered as usual: Worker calls it until its tier-1 code (`mov eax, [rdi+8]; ret`) is
        // installed; with DOTNET_TieredCompilation=0 it is compiled fully optimized at once.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int BalanceOf(Account account) => account.Balance;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Charge(Account account, int amount)
        {
            Recorder.RecordAndSignal("g", "nullref: Worker -> Charge -> BalanceOf(null) faults at its first instruction (unhandled NullReferenceException)",
                                     "null dereference", signal: false, next: typeof(NullRefScenario).GetMethod(nameof(BalanceOf)));
            Recorder.Write(RecordPath, "nullref");
            return BalanceOf(account) - amount;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Worker()
        {
            int total = 0;
            // About a second of calls, then time for the background tier-1 compile (as in
            // TieringScenario): the fault is then in tier-1 code, at its first instruction.
            for (int i = 0; i < 2000; i++)
            {
                total += BalanceOf(new Account(i));
                if (i % 20 == 0) Thread.Sleep(10);
            }
            Thread.Sleep(300);
            Console.Out.WriteLine(total);
            Charge(null, total);
        }
    }

    // Threads that only wait, for benchmarks of many threads (bench/live.py): `park RECORD N`
    // adds N of them, each `depth` frames of Descend deep in Thread.Sleep. No scenario's record
    // lists them.
    public static class IdleScenario
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Descend(int depth)
        {
            if (depth == 0)
            {
                Thread.Sleep(Timeout.Infinite);
                return 0;
            }
            return Descend(depth - 1) + 1; // not a tail call: the frame stays
        }

        public static void Start(int count)
        {
            for (int i = 0; i < count; i++)
            {
                int depth = 5 + i % 10;
                new Thread(() => Descend(depth)) { IsBackground = true, Name = $"idle-{i}" }.Start();
            }
        }
    }

    public static class Program
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Main(string[] args)
        {
            if (args.Length == 1 && args[0] == "gc")
            {
                GcScenario.Run();
                return 0;
            }
            bool usage = args.Length == 2 ? args[0] == "park" || args[0] == "crash" || args[0] == "nullref"
                                          : args.Length == 3 && args[0] == "park" && int.TryParse(args[2], out _);
            if (!usage)
            {
                Console.Error.WriteLine("usage: StackwalkDotnet park|crash|nullref RECORD.json, park RECORD.json IDLE_THREADS, or gc");
                return 2;
            }
            string record = args[1];
            if (args[0] == "crash")
            {
                CrashScenario.RecordPath = record;
                var h = new Thread(CrashScenario.Helper) { IsBackground = true, Name = "crash-helper" };
                h.Start();
                Thread.Sleep(300);
                return CrashScenario.Crash1(0);
            }

            if (args[0] == "nullref")
            {
                NullRefScenario.RecordPath = record;
                var worker = new Thread(NullRefScenario.Worker) { Name = "nullref-worker" };
                worker.Start();
                worker.Join();
                return 0;
            }

            PInvokeScenario.Setup();
            ILStubScenario.Setup(record);
            var threads = new[]
            {
                new Thread(PInvokeScenario.ThreadMain) { IsBackground = true, Name = "scenario-b-pinvoke" },
                new Thread(ReversePInvokeScenario.ThreadMain) { IsBackground = true, Name = "scenario-c-unmanagedcallersonly" },
                new Thread(CatchScenario.ThreadMain) { IsBackground = true, Name = "scenario-d-catch" },
                new Thread(ILStubScenario.ThreadMain) { IsBackground = true, Name = "scenario-h-ilstub" },
                new Thread(DynamicScenario.ThreadMain) { IsBackground = true, Name = "scenario-i-dynamic" },
                new Thread(TieringScenario.ThreadMain) { IsBackground = true, Name = "scenario-j-tiering" },
            };
            foreach (var t in threads) t.Start();
            if (args.Length == 3) IdleScenario.Start(int.Parse(args[2]));
            Task<int> task = AsyncScenario.RunAsync(5);

            var coordinator = new Thread(() =>
            {
                Recorder.Parked.Wait();
                Thread.Sleep(1000);  // let every thread get from its record into its blocking call
                Recorder.Write(record, "park");
                Console.Out.WriteLine("READY");
                Console.Out.Flush();
                Thread.Sleep(Timeout.Infinite);
            }) { IsBackground = true, Name = "coordinator" };
            coordinator.Start();

            return MainScenario.A(1) + task.Result;
        }
    }
}
