package io.mcpool;

/** Big-endian numbers for the transcoders. */
final class Bytes {
    private Bytes() {}

    static byte[] int4(int v) {
        return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }

    static byte[] long8(long v) {
        byte[] b = new byte[8];
        for (int i = 7; i >= 0; i--) {
            b[i] = (byte) v;
            v >>>= 8;
        }
        return b;
    }

    static int int4(byte[] b) {
        return ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    }

    static long long8(byte[] b) {
        long v = 0;
        for (int i = 0; i < 8; i++) v = (v << 8) | (b[i] & 0xff);
        return v;
    }

    /** Big-endian with leading zero bytes dropped (spymemcached's TranscoderUtils(true)). */
    static byte[] packed(long v) {
        byte[] full = long8(v);
        int first = 0;
        while (first < 8 && full[first] == 0) first++;
        byte[] out = new byte[8 - first];
        System.arraycopy(full, first, out, 0, out.length);
        return out;
    }

    static long unpacked(byte[] b, int max) {
        if (b.length > max) {
            throw new ClientException("a number of " + b.length + " bytes where at most " + max + " fit", null);
        }
        long v = 0;
        for (byte x : b) v = (v << 8) | (x & 0xff);
        return v;
    }
}
