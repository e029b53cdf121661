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
            throw new Unreadable("cannot deserialize a stored Java object: " + e, e);
        }
        if (left != 0) throw new TrailingBytes(left);
        return value;
    }

    private static final int STATUS_VALUE_FORMAT = 210; // include/mcpool.h

    /** A serialized Java object followed by more bytes: MCPOOL_VALUE_FORMAT, never the object
     * without them. A transcoder does not know the key; the client's reads name it
     * ({@link #forKey}). */
    static final class TrailingBytes extends ServerException {
        private static final long serialVersionUID = 1L;
        private final int extra;

        TrailingBytes(int extra) {
            super(STATUS_VALUE_FORMAT, "MCPOOL_VALUE_FORMAT", message("a value", extra));
            this.extra = extra;
        }

        private static String message(String what, int extra) {
            return what + " is a Java serialized object with " + extra + " bytes after the serialized object"
                + " (appended or prepended to a serialized value?): not returned";
        }

        /** The error the client's reads throw: a plain {@link ServerException}, as the core's. */
        ServerException forKey(String key) {
            return new ServerException(STATUS_VALUE_FORMAT, "MCPOOL_VALUE_FORMAT", message("the value of " + key, extra));
        }
    }

    /** A value that was read but that Java cannot or may not deliver: a serialized Java
     * object while serialization is off, a stored Java object that does not deserialize (a
     * corrupt stream, a class this JVM does not have), another language's serialized object
     * (a Python pickle, a Perl Storable image), a kind this binding does not know.
     * MCPOOL_VALUE_FORMAT, a {@link ServerException}: the status and class the core gives
     * the same item when it refuses it itself (a serialized kind that is off in the core), so
     * a value is equally unreadable whichever side refuses it; the stored value is at fault,
     * not the caller's input, and the key exists (never a null). The transcoders raise it
     * without the key; the client's reads name the key and flags ({@link #forKey}). */
    static final class Unreadable extends ServerException {
        private static final long serialVersionUID = 1L;
        private final String why;

        Unreadable(String why, Throwable cause) {
            super(STATUS_VALUE_FORMAT, "MCPOOL_VALUE_FORMAT", why, cause);
            this.why = why;
        }

        /** The error the client's reads throw: a plain {@link ServerException}, as the core's. */
        ServerException forKey(String key, int flags) {
            return new ServerException(STATUS_VALUE_FORMAT, "MCPOOL_VALUE_FORMAT", "the value of " + key
                + " with flags " + Integer.toUnsignedString(flags) + " (0x" + Integer.toHexString(flags) + "): "
                + why, getCause());
        }
    }

    /** A read of a serialized Java object while serialization is off. */
    static Unreadable off() {
        return new Unreadable("the value is a Java serialized object, and Java serialization is off"
            + " (enable it explicitly)", null);
    }

    /** A store of a value that needs serialization while it is off: the caller's input. */
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
