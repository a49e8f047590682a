// clrmd-oracle DUMP [DAC]: ClrMD's view of a .NET dump, as JSON on stdout.
// Independent of stackwalk: the runtime's own DAC (libmscordaccore.so) walks the stacks.
using System.Text;
using System.Text.Json;
using Microsoft.Diagnostics.Runtime;

if (args.Length < 1 || args.Length > 2)
{
    Console.Error.WriteLine("usage: clrmd-oracle DUMP [PATH/libmscordaccore.so]");
    return 2;
}
string dump = args[0];
using DataTarget dt = DataTarget.LoadDump(dump);
if (dt.ClrVersions.Length == 0)
{
    Console.Error.WriteLine("clrmd-oracle: no CLR in " + dump);
    return 1;
}
ClrInfo info = dt.ClrVersions[0];
using ClrRuntime runtime = args.Length == 2 ? info.CreateRuntime(args[1], ignoreMismatch: true) : info.CreateRuntime();

static string Hex(ulong v) => "0x" + v.ToString("x");

// An exception's type, message, object and HResult, then its inner exceptions (a few deep).
static void WriteException(Utf8JsonWriter w, ClrException ex, int depth)
{
    w.WriteString("type", ex.Type?.Name);
    w.WriteString("message", ex.Message);
    w.WriteString("address", Hex(ex.Address));
    w.WriteString("hresult", "0x" + ((uint)ex.HResult).ToString("x8"));
    ClrException? inner = depth < 4 ? ex.Inner : null;
    if (inner == null)
    {
        w.WriteNull("inner");
        return;
    }
    w.WriteStartObject("inner");
    WriteException(w, inner, depth + 1);
    w.WriteEndObject();
}

var ms = new MemoryStream();
using (var w = new Utf8JsonWriter(ms, new JsonWriterOptions { Indented = true }))
{
    w.WriteStartObject();
    w.WriteString("tool", "ClrMD (Microsoft.Diagnostics.Runtime) " +
        typeof(DataTarget).Assembly.GetName().Version);
    w.WriteString("dump", Path.GetFileName(dump));
    w.WriteString("runtime_version", info.Version.ToString());
    w.WriteString("runtime_flavor", info.Flavor.ToString());
    w.WriteString("runtime_module", info.ModuleInfo.FileName);
    w.WriteString("runtime_module_base", Hex(info.ModuleInfo.ImageBase));

    w.WriteStartArray("modules");
    foreach (var m in dt.DataReader.EnumerateModules().OrderBy(m => m.ImageBase))
    {
        w.WriteStartObject();
        w.WriteString("file", m.FileName);
        w.WriteString("base", Hex(m.ImageBase));
        w.WriteNumber("size", m.ImageSize);
        w.WriteEndObject();
    }
    w.WriteEndArray();

    w.WriteStartArray("managed_modules");
    foreach (var m in runtime.EnumerateModules().OrderBy(m => m.ImageBase))
    {
        w.WriteStartObject();
        w.WriteString("name", m.Name);
        w.WriteString("base", Hex(m.ImageBase));
        w.WriteNumber("size", m.Size);
        w.WriteBoolean("is_dynamic", m.IsDynamic);
        w.WriteString("layout", m.Layout.ToString());
        w.WriteEndObject();
    }
    w.WriteEndArray();

    w.WriteStartArray("threads");
    foreach (ClrThread t in runtime.Threads.OrderBy(t => t.OSThreadId))
    {
        w.WriteStartObject();
        w.WriteNumber("os_thread_id", t.OSThreadId);
        w.WriteNumber("managed_thread_id", t.ManagedThreadId);
        w.WriteBoolean("is_alive", t.IsAlive);
        w.WriteBoolean("is_finalizer", t.IsFinalizer);
        w.WriteString("address", Hex(t.Address));
        w.WriteString("state", t.State.ToString());
        ClrException? ex = t.CurrentException;
        if (ex != null)
        {
            w.WriteStartObject("current_exception");
            WriteException(w, ex, 0);
            w.WriteStartArray("stack_trace");
            foreach (var f in ex.StackTrace)
            {
                w.WriteStartObject();
                w.WriteString("ip", Hex(f.InstructionPointer));
                w.WriteString("sp", Hex(f.StackPointer));
                w.WriteString("method", f.Method == null ? null : f.Method.Type?.Name + "." + f.Method.Name);
                w.WriteEndObject();
            }
            w.WriteEndArray();
            w.WriteEndObject();
        }
        w.WriteStartArray("frames");
        foreach (ClrStackFrame f in t.EnumerateStackTrace(includeContext: false))
        {
            w.WriteStartObject();
            w.WriteString("kind", f.Kind.ToString());
            w.WriteString("sp", Hex(f.StackPointer));
            w.WriteString("ip", Hex(f.InstructionPointer));
            ClrMethod? m = f.Method;
            if (m != null)
            {
                w.WriteString("type", m.Type?.Name);
                w.WriteString("method", m.Name);
                w.WriteString("signature", m.Signature);
                w.WriteString("method_desc", Hex(m.MethodDesc));
                w.WriteString("native_code", Hex(m.NativeCode));
                w.WriteString("compilation", m.CompilationType.ToString());
                if (f.InstructionPointer != 0)
                    w.WriteNumber("il_offset", m.GetILOffset(f.InstructionPointer));
            }
            if (f.Kind == ClrStackFrameKind.Runtime || f.FrameName != null)
                w.WriteString("frame_name", f.FrameName);
            w.WriteString("text", f.ToString());
            w.WriteEndObject();
        }
        w.WriteEndArray();
        w.WriteEndObject();
    }
    w.WriteEndArray();
    w.WriteEndObject();
}
Console.Out.Write(Encoding.UTF8.GetString(ms.ToArray()));
Console.Out.WriteLine();
return 0;
