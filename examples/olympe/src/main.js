// The web app: the platform's runtime (the design tool's package) and its core library
import 'olympe'
import '@olympeio/core'
