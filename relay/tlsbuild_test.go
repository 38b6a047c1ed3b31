package relay

import "encoding/binary"

// rawHello builds a TLS record holding a ClientHello with the given
// extensions (each a full extension: type, length, data), for the cases
// crypto/tls will not produce (an IP in the SNI, two names, a repeated
// extension).
func rawHello(exts ...[]byte) []byte {
	body := []byte{3, 3}                     // legacy_version
	body = append(body, make([]byte, 32)...) // random
	body = append(body, 0)                   // session id
	body = append(body, 0, 2, 0x13, 0x01)    // one cipher suite
	body = append(body, 1, 0)                // null compression
	var all []byte
	for _, e := range exts {
		all = append(all, e...)
	}
	body = binary.BigEndian.AppendUint16(body, uint16(len(all)))
	body = append(body, all...)
	msg := []byte{1, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}
	msg = append(msg, body...)
	rec := []byte{0x16, 3, 1, byte(len(msg) >> 8), byte(len(msg))}
	return append(rec, msg...)
}

// ext builds one extension.
func ext(typ uint16, data []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...)
}

// sniExt builds a server_name extension listing names as host_name
// entries (type 0), or with the given type when names[i] starts with
// "\x01".
func sniExt(names ...string) []byte {
	var list []byte
	for _, n := range names {
		typ := byte(0)
		if len(n) > 0 && n[0] == 1 {
			typ, n = 1, n[1:]
		}
		list = append(list, typ)
		list = binary.BigEndian.AppendUint16(list, uint16(len(n)))
		list = append(list, n...)
	}
	data := binary.BigEndian.AppendUint16(nil, uint16(len(list)))
	return ext(0, append(data, list...))
}
