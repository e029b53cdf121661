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

    static Object deserialize(byte[] data, ClassLoader loader) {
        try (ObjectInputStream in = new LoaderObjectInputStream(new ByteArrayInputStream(data), loader)) {
            return in.readObject();
        } catch (IOException | ClassNotFoundException e) {
            throw new ClientException("cannot deserialize a stored Java object: " + e, e);
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
