// The backend: the platform's Node.js runtime and its core library
import 'olympe'
import '@olympeio/core'
