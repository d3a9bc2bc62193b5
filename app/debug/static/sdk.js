/* Pinchtab debug SDK: being written */
