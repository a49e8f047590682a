// The test assembly of lib/frames' EcmaMetadata tests: nested generic types,
// generic methods and parameters of every signature shape.
//
// Built into Nested.dll (.NET SDK 10.0.401): a net10.0 class library with
// <AllowUnsafeBlocks>true</AllowUnsafeBlocks>, <DebugType>none</DebugType>, <Deterministic>true</Deterministic>,
// <ImplicitUsings>disable</ImplicitUsings>; `dotnet build -c Release`.
using System.Collections.Generic;

namespace Demo.Shapes
{
    public class Outer<T>
    {
        public class Inner<U>
        {
            public V Method<V>(int a, string b, T t, U u, V v, ref int r, int[] arr, int[,] md,
                               List<T> list, Dictionary<string, int> d) => v;
            public class Deepest
            {
                public void Leaf() { }
            }
        }

        public static unsafe void Pointers(int* p, delegate*<int, void> f, object o, System.TypedReference tr) { }
        public T Get() => default;
    }

    public struct Point
    {
        public int X;
        public Point(int x) { X = x; }
        public static Point operator +(Point a, Point b) => new Point(a.X + b.X);
        public void Nested(Outer<int>.Inner<string> inner, Point? maybe) { }
    }

    public static class Helpers
    {
        public static void VarArgs(int a, __arglist) { }
        public static void Primitives(bool a, char b, sbyte c, byte d, short e, ushort f, uint g, long h,
                                      ulong i, float j, double k, nint l, nuint m) { }
    }
}

public class Global
{
    static Global() { }
    public int Property { get; set; }
}
