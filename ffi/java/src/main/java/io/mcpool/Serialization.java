package io.mcpool;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.Serializable;

/** Java serialization for the transcoders, used only when a transcoder allows it. */
final class Serialization {
    private Serialization() {}

    static byte[] serialize(Object value) {
        if (!(value instanceof Serializable)) {
            throw new ClientException("cannot store a " + value.getClass().getName()
                + ": not a type the transcoder encodes natively and not Serializable", null);
        }
        try {
            ByteArrayOutputStream bos = new ByteArrayOutputStream();
            try (ObjectOutputStream oos = new ObjectOutputStream(bos)) {
                oos.writeObject(value);
            }
            return bos.toByteArray();
        } catch (IOException e) {
            throw new ClientException("cannot serialize a " + value.getClass().getName() + ": " + e, e);
        }
    }

    /** The object serialized in data, which must end where the object ends: memcached
     * appends raw bytes and keeps the item's flags, and ObjectInputStream stops at the end of
     * the first object, so an append (or a prepend of a whole serialized object) would read
     * as the value without the added bytes. Bytes after the object are {@link TrailingBytes}
     * (MCPOOL_VALUE_FORMAT), as bytes after a compressed stream are the core's error
     * (docs/value-format.md, Reading 2). */
    static Object deserialize(byte[] data, ClassLoader loader) {
        ByteArrayInputStream bytes = new ByteArrayInputStream(data);
        Object value;
        int left;
        try (ObjectInputStream in = new LoaderObjectInputStream(bytes, loader)) {
            value = in.readObject();
            // ObjectInputStream reads ahead of an object by nothing (a peeked type code is
            // consumed by the read that peeked it): what the array has left follows the object
            left = bytes.available();
        } catch (IOException | ClassNotFoundException e) {
            throw new Undeserializable(null, 0, e);
        }
        if (left != 0) throw new TrailingBytes(null, left);
        return value;
    }

    /** A serialized Java object followed by more bytes: MCPOOL_VALUE_FORMAT, never the object
     * without them. A transcoder does not know the key; the client's reads name it
     * ({@link #forKey}). */
    static final class TrailingBytes extends ServerException {
        private static final long serialVersionUID = 1L;
        private static final int STATUS_VALUE_FORMAT = 210; // include/mcpool.h
        private final int extra;

        TrailingBytes(String key, int extra) {
            super(STATUS_VALUE_FORMAT, "MCPOOL_VALUE_FORMAT", (key == null ? "a value" : "the value of " + key)
                + " is a Java serialized object with " + extra + " bytes after the serialized object"
                + " (appended or prepended to a serialized value?): not returned");
            this.extra = extra;
        }

        TrailingBytes forKey(String key) {
            return new TrailingBytes(key, extra);
        }
    }

    /** Stored bytes flagged as a serialized Java object that do not deserialize (a corrupt
     * stream, a class this JVM does not have): MCPOOL_VALUE_FORMAT, as for bytes after the
     * object: the stored value is at fault, not the caller's input. The client's reads name
     * the key and flags ({@link #forKey}). */
    static final class Undeserializable extends ServerException {
        private static final long serialVersionUID = 1L;
        private static final int STATUS_VALUE_FORMAT = 210; // include/mcpool.h

        Undeserializable(String key, int flags, Throwable cause) {
            super(STATUS_VALUE_FORMAT, "MCPOOL_VALUE_FORMAT", (key == null ? "a value"
                : "the value of " + key + " with flags " + Integer.toUnsignedString(flags)
                    + " (0x" + Integer.toHexString(flags) + ")")
                + ": cannot deserialize a stored Java object: " + cause);
            initCause(cause);
        }

        Undeserializable forKey(String key, int flags) {
            return new Undeserializable(key, flags, getCause());
        }
    }

    static ClientException refused(String what) {
        return new ClientException(what + ": Java serialization is off (enable it explicitly)", null);
    }

    private static final class LoaderObjectInputStream extends ObjectInputStream {
        private final ClassLoader loader;

        LoaderObjectInputStream(InputStream in, ClassLoader loader) throws IOException {
            super(in);
            this.loader = loader;
        }

        @Override
        protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
            if (loader != null) {
                try {
                    return Class.forName(desc.getName(), false, loader);
                } catch (ClassNotFoundException e) {
                    // fall through to the default
                }
            }
            return super.resolveClass(desc);
        }
    }
}
